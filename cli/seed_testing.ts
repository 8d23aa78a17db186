/**
 * Test support for seed files: the message a file that cannot be loaded is refused with.
 *
 * @module
 */
import assert from "node:assert/strict";
import { parseSeedFile, SeedFileError } from "./seed.ts";

/** The error message `parseSeedFile` throws for `value` (as JSON). */
export function seedRefusal(value: unknown): string {
  try {
    parseSeedFile(JSON.stringify(value), "bad.json");
  } catch (error) {
    assert.ok(error instanceof SeedFileError, String(error));
    return error.message;
  }
  assert.fail("the file was accepted");
}
