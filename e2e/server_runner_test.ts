/** The runner inside the server process, as a new user meets it: `deno task start`, add a probe. */
import assert from "node:assert/strict";
import { createPostgresDatabase } from "../server/testing/app.ts";
import {
  isListeningLine,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";

const KEY = "runner-test-key-1";

/** The server with the given settings, once it has said where it listens. */
const startServer = (env: Record<string, string>): Promise<ServerProcess> =>
  startServerProcess({
    env: { SERVICE_API_KEY: KEY, ...env },
    output: "capture",
    readyLine: isListeningLine,
  });

const call = async (url: string, method = "GET", body?: unknown) => {
  const res = await fetch(url, {
    method,
    headers: { "x-service-api-key": KEY, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};

Deno.test("a new user starts the server, adds a probe, and sees its results and stats", async () => {
  const dataDir = await Deno.makeTempDir();
  const target = await startTarget();
  const server = await startServer({ DATA_DIR: dataDir, PROBE_ALLOW_NETWORKS: "127.0.0.1/32" });
  try {
    assert.match(server.output(), /"msg":"runner started"/);
    await call(`${server.url}/api/v1/projects`, "POST", { project: "site" });
    const created = await call(`${server.url}/api/v1/projects/site/probes`, "POST", {
      url: `${target.origin}/ok`,
    });
    const path = `${server.url}/api/v1/projects/site/probes/${created.body.data.probe_id}`;
    let results = await call(`${path}/results`);
    for (let i = 0; i < 300 && results.body.meta.count === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      results = await call(`${path}/results`);
    }
    assert.equal(results.body.data[0].outcome, "up");
    const stats = await call(`${path}/stats?window=1h`);
    assert.equal(stats.body.data.runs, 1);
    assert.equal(stats.body.data.uptime, 1);
  } finally {
    const status = await server.stop();
    await target.close();
    await Deno.remove(dataDir, { recursive: true });
    assert.equal(status.code, 0, server.output());
    assert.match(server.output(), /"msg":"runner stopped"[\s\S]*"msg":"stopped"/);
  }
});

Deno.test({
  // On PostgreSQL, which starts in a second where a fresh embedded database takes ten.
  name: "RUNNER=off serves the API without a runner",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const dataDir = await Deno.makeTempDir();
    const { url, drop } = await createPostgresDatabase();
    const server = await startServer({ DATA_DIR: dataDir, RUNNER: "off", DATABASE_URL: url });
    try {
      assert.doesNotMatch(server.output(), /runner started/);
      const status = await call(`${server.url}/api/v1/projects`);
      assert.equal(status.status, 200);
    } finally {
      assert.equal((await server.stop()).code, 0);
      await Deno.remove(dataDir, { recursive: true });
      await drop();
    }
  },
});
