import assert from "node:assert/strict";
import { createPostgresDatabase } from "../server/testing/app.ts";

const MAIN = new URL("../server/main.ts", import.meta.url).pathname;

interface Running {
  child: Deno.ChildProcess;
  url: string;
  output: () => string;
}

/** Starts the real server as a new user would, on a free port, and waits for it to listen. */
async function start(env: Record<string, string>): Promise<Running> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN],
    env: { PORT: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const drain = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += value;
    }
  })();
  child.stderr.pipeTo(
    new WritableStream({ write: (c) => void (text += new TextDecoder().decode(c)) }),
  );
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const m = text.match(/"msg":"listening","url":"(http:\/\/[^"]+)"/);
    if (m) return { child, url: m[1], output: () => text };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  await drain;
  throw new Error(`the server did not start:\n${text}`);
}

async function stop(running: Running): Promise<Deno.CommandStatus> {
  running.child.kill("SIGTERM");
  return await running.child.status;
}

Deno.test("with no configuration the server generates a key once, serves, and stops cleanly", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    let server = await start({ DATA_DIR: dataDir });
    const key = (await Deno.readTextFile(`${dataDir}/api-key`)).trim();
    assert.ok(server.output().includes(key), "the new key is printed");
    assert.ok(server.output().includes("curl -H 'X-Service-Api-Key:"));
    const created = await fetch(`${server.url}/api/v1/projects`, {
      method: "POST",
      headers: { "x-service-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ project: "kept" }),
    });
    assert.equal(created.status, 201);
    await created.body?.cancel();
    let status = await stop(server);
    assert.equal(status.code, 0);
    assert.match(server.output(), /"msg":"stopped"/);

    // A second start reuses the key, keeps the data, and prints the key nowhere.
    server = await start({ DATA_DIR: dataDir });
    assert.ok(!server.output().includes(key));
    const got = await fetch(`${server.url}/api/v1/projects/kept`, {
      headers: { "x-service-api-key": key },
    });
    assert.equal(got.status, 200);
    await got.body?.cancel();
    status = await stop(server);
    assert.equal(status.code, 0);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a bad configuration value stops start-up naming the variable", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN],
    env: { PORT: "not-a-port" },
  }).output();
  assert.equal(out.code, 1);
  assert.match(new TextDecoder().decode(out.stderr), /PORT/);
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
      assert.equal((await stop(server)).code, 0);
    } finally {
      await drop();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
