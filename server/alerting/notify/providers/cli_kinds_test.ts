/**
 * The CLI and seed files know each kind's settings from `TARGET_KIND_SETTINGS` in the shared
 * package, which cannot import the registry: this keeps the two equal.
 */
import assert from "node:assert/strict";
import { TARGET_KIND_SETTINGS } from "@probe/shared";
import { targetKinds } from "./schema.ts";

Deno.test("the shared list of kinds and settings is the registry's", () => {
  const registry = targetKinds().map(({ kind, fields }) => [
    kind,
    fields.map((f) => [f.name, {
      required: f.required,
      secret: f.secret,
      ...(f.input === "emails" && { list: true }),
    }]),
  ]);
  const shared = Object.entries(TARGET_KIND_SETTINGS).map(([kind, settings]) => [
    kind,
    Object.entries(settings).map(([name, rule]) => [name, { ...rule }]),
  ]);
  assert.deepEqual(
    shared,
    registry,
    "a kind added or changed in server/alerting/notify/providers/ is to be in TARGET_KIND_SETTINGS too",
  );
});
