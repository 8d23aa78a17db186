import assert from "node:assert/strict";
import { createKeyCheck, firstStartNote, resolveApiKeys } from "./api_key.ts";
import { createLogger } from "../../base/log.ts";

Deno.test("the key check accepts each configured key and nothing else", () => {
  const check = createKeyCheck(["alpha-key-1", "beta-key-22"]);
  assert.equal(check("alpha-key-1"), "write");
  assert.equal(check("beta-key-22"), "write");
  // Shorter, longer, another case, and of the same length differing in the last character only.
  for (
    const k of [
      null,
      "",
      "alpha-key-",
      "alpha-key-11",
      "ALPHA-KEY-1",
      "alpha-key-2",
      "beta-key-2\0",
    ]
  ) {
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
    const generated = await resolveApiKeys({ configured: undefined, dataDir, log });
    const [first] = generated.keys;
    assert.deepEqual(generated.generated, { key: first, path: `${dataDir}/api-key` });
    assert.ok(first.length >= 32);
    assert.equal((await Deno.stat(`${dataDir}/api-key`)).mode! & 0o777, 0o600);
    // Later starts read it back, and announce nothing.
    assert.deepEqual(await resolveApiKeys({ configured: undefined, dataDir, log }), {
      keys: [first],
    });
    const configured = await resolveApiKeys({ configured: ["given-key-1"], dataDir, log });
    assert.deepEqual(configured, { keys: ["given-key-1"] });
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("the first start's note names the address the service listens at, and what the CLI needs", () => {
  const at = (url: string, dataDir = "./data") =>
    firstStartNote({ key: "k-123", path: `${dataDir}/api-key`, url, dataDir });
  const standard = at("http://127.0.0.1:8000");
  assert.match(
    standard,
    /curl -H 'X-Service-Api-Key: k-123' http:\/\/127\.0\.0\.1:8000\/api\/v1\/projects/,
  );
  assert.match(standard, / {2}CLI: {12}deno task cli projects list/);
  assert.match(standard, / {2}Backups: {8}deno task backup/);
  // The hint on PROBE_ALLOW_NETWORKS only while it opens nothing.
  assert.match(standard, /until PROBE_ALLOW_NETWORKS opens them/);
  const opened = firstStartNote({
    key: "k",
    path: "./data/api-key",
    url: "http://127.0.0.1:8000",
    dataDir: "./data",
    networksOpened: true,
  });
  assert.doesNotMatch(opened, /PROBE_ALLOW_NETWORKS/);
  // Elsewhere, the CLI and the backup are told where the service and its key are.
  const elsewhere = at("http://127.0.0.1:41234", "/srv/probes");
  assert.match(elsewhere, /Dashboard: {6}http:\/\/127\.0\.0\.1:41234\//);
  for (const line of ["CLI", "Backups"]) {
    assert.match(
      elsewhere,
      new RegExp(
        `${line}: +PROBE_SERVICE_URL=http://127\\.0\\.0\\.1:41234 DATA_DIR=/srv/probes deno task`,
      ),
    );
  }
});
