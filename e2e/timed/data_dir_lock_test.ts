/**
 * Issue 10: one process per embedded database. A second server on a DATA_DIR in use stops at
 * once with one line naming DATA_DIR and the holder's pid; the first one serves on; once it has
 * stopped, or died, the next start takes DATA_DIR over with the data in it.
 */
import assert from "node:assert/strict";
import { createPostgresDatabase, TEST_API_KEY } from "../../server/testing/app.ts";
import { type ServerProcess, startServerProcess } from "../../server/testing/process.ts";

const env = (dataDir: string) => ({
  DATA_DIR: dataDir,
  SERVICE_API_KEY: TEST_API_KEY,
  RUNNER: "off",
});

async function call(server: ServerProcess, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { "x-service-api-key": TEST_API_KEY, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("a second server on the same DATA_DIR stops at once, naming it and the holder", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "probe-data-dir-" });
  const started: ServerProcess[] = [];
  try {
    const first = await startServerProcess({ env: env(dataDir) });
    started.push(first);
    assert.equal(await call(first, "POST", "/projects", { project: "first" }), 201);

    const t0 = performance.now();
    const second = await startServerProcess({
      env: env(dataDir),
      waitReady: false,
      output: "capture",
    });
    started.push(second);
    const status = await second.status;
    console.log(
      `data dir lock: the second server ended ${
        Math.round(performance.now() - t0)
      } ms after its start`,
    );
    assert.equal(status.code, 1, second.output());
    assert.equal(second.output("stdout"), "");
    assert.equal(
      second.output("stderr"),
      `DATA_DIR ${dataDir} is in use by another process (pid ${first.pid}); ` +
        "the embedded database allows one process at a time",
    );

    // The first one is untouched and serves on.
    assert.equal(await call(first, "GET", "/projects/first"), 200);
    assert.equal(await call(first, "POST", "/projects", { project: "second" }), 201);
    assert.equal((await first.stop()).code, 0);

    // Stopped, it lets the next one in, which finds everything the first one wrote.
    const third = await startServerProcess({ env: env(dataDir) });
    started.push(third);
    assert.equal(await call(third, "GET", "/projects/first"), 200);
    assert.equal(await call(third, "GET", "/projects/second"), 200);

    // A process that dies holds nothing: the system releases its lock.
    third.kill("SIGKILL");
    await third.status;
    const fourth = await startServerProcess({ env: env(dataDir) });
    started.push(fourth);
    assert.equal(await call(fourth, "GET", "/projects/second"), 200);
    assert.equal((await fourth.stop()).code, 0);
  } finally {
    for (const server of started) {
      server.kill();
      await server.status;
    }
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test({
  name: "with DATABASE_URL, DATA_DIR is not locked: servers on PostgreSQL may share it",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "probe-data-dir-" });
    const started: ServerProcess[] = [];
    let dropDatabase: (() => Promise<void>) | undefined;
    try {
      const { url: databaseUrl, drop } = await createPostgresDatabase();
      dropDatabase = drop;
      for (let i = 0; i < 2; i++) {
        started.push(
          await startServerProcess({ env: { ...env(dataDir), DATABASE_URL: databaseUrl } }),
        );
      }
      for (const server of started) {
        assert.equal(await call(server, "GET", "/settings/iam-alive"), 200);
      }
      for (const server of started) assert.equal((await server.stop()).code, 0);
    } finally {
      for (const server of started) {
        server.kill();
        await server.status;
      }
      await dropDatabase?.();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
