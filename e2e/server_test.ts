import assert from "node:assert/strict";
import { createPostgresDatabase } from "../server/testing/app.ts";
import {
  isListeningLine,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";

/** Starts the real server as a new user would, and waits until it has said where it listens. */
const start = (env: Record<string, string>): Promise<ServerProcess> =>
  startServerProcess({ env, output: "capture", readyLine: isListeningLine });

Deno.test("with no configuration the server generates a key once, serves, and stops cleanly", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    let server = await start({ DATA_DIR: dataDir });
    const key = (await Deno.readTextFile(`${dataDir}/api-key`)).trim();
    assert.ok(server.output().includes(key), "the new key is printed");
    // The first line comes before the slow creation of the database, and says what it does.
    assert.match(server.lines[0].text, /creating the embedded database in .*pgdata: the first/);
    assert.ok(server.output().includes("curl -H 'X-Service-Api-Key:"));
    const created = await fetch(`${server.url}/api/v1/projects`, {
      method: "POST",
      headers: { "x-service-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ project: "kept" }),
    });
    assert.equal(created.status, 201);
    await created.body?.cancel();
    let status = await server.stop();
    assert.equal(status.code, 0);
    assert.match(server.output(), /"msg":"stopped"/);

    // A second start reuses the key, keeps the data, and prints the key nowhere.
    server = await start({ DATA_DIR: dataDir });
    assert.ok(!server.output().includes(key));
    assert.match(server.lines[0].text, /"msg":"starting the embedded database in .*pgdata"/);
    const got = await fetch(`${server.url}/api/v1/projects/kept`, {
      headers: { "x-service-api-key": key },
    });
    assert.equal(got.status, 200);
    await got.body?.cancel();
    status = await server.stop();
    assert.equal(status.code, 0);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a bad configuration value stops start-up naming the variable", async () => {
  const server = await startServerProcess({
    env: { PORT: "not-a-port" },
    waitReady: false,
    output: "capture",
  });
  const status = await server.status;
  assert.equal(status.code, 1);
  assert.match(server.output("stderr"), /PORT/);
});

Deno.test({
  name: "with DATABASE_URL the server runs on PostgreSQL",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const dataDir = await Deno.makeTempDir();
    try {
      const server = await start({
        DATABASE_URL: url,
        SERVICE_API_KEY: "pg-key-12345",
        DATA_DIR: dataDir,
      });
      assert.match(server.output(), /"database":"postgres"/);
      const res = await fetch(`${server.url}/api/v1/settings/iam-alive`, {
        headers: { "x-service-api-key": "pg-key-12345" },
      });
      assert.deepEqual(await res.json(), {
        data: { enabled: false, interval_hours: 24, channels: ["log"] },
      });
      assert.equal((await server.stop()).code, 0);
    } finally {
      await drop();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
