import assert from "node:assert/strict";
import { createKeyCheck, resolveApiKeys } from "./api_key.ts";
import { createLogger } from "../log.ts";

Deno.test("the key check accepts each configured key and nothing else", () => {
  const check = createKeyCheck(["alpha-key-1", "beta-key-22"]);
  assert.equal(check("alpha-key-1"), "write");
  assert.equal(check("beta-key-22"), "write");
  for (const k of [null, "", "alpha-key-", "alpha-key-11", "ALPHA-KEY-1"]) {
    assert.equal(check(k), null);
  }
});

Deno.test("the key check names each key's scope: read-only keys read", () => {
  const check = createKeyCheck(["alpha-key-1"], ["reader-key-1", "reader-key-2"]);
  assert.equal(check("alpha-key-1"), "write");
  assert.equal(check("reader-key-1"), "read");
  assert.equal(check("reader-key-2"), "read");
  for (const k of [null, "", "reader-key-", "reader-key-3", "READER-KEY-1"]) {
    assert.equal(check(k), null);
  }
  // Read-only keys alone: no key writes.
  const readers = createKeyCheck([], ["reader-key-1"]);
  assert.equal(readers("reader-key-1"), "read");
  assert.equal(readers("alpha-key-1"), null);
});

Deno.test("without configured keys one is generated once, kept 0600, and reused", async () => {
  const dataDir = await Deno.makeTempDir();
  const log = createLogger("silent");
  try {
    const [first] = await resolveApiKeys({ configured: undefined, dataDir, port: 1, log });
    assert.ok(first.length >= 32);
    assert.equal((await Deno.stat(`${dataDir}/api-key`)).mode! & 0o777, 0o600);
    const [again] = await resolveApiKeys({ configured: undefined, dataDir, port: 1, log });
    assert.equal(again, first);
    const configured = await resolveApiKeys({ configured: ["given-key-1"], dataDir, port: 1, log });
    assert.deepEqual(configured, ["given-key-1"]);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
