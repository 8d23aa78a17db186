/**
 * What `deno task start` runs: the bundles `deno task bundle` builds (server/operations/bundle.ts),
 * built once for the sources at hand, and a server that runs from them as from its modules: a
 * first start on a new embedded database (its thread's bundle, the PGlite template), a probe run
 * (the probe thread's bundle), the generated document, Swagger UI's and the dashboard's files.
 * And the line that runs the modules when no bundle could be built.
 */
import assert from "node:assert/strict";
import { startServerProcess } from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { readOpenApiJson } from "../server/edge/openapi_served.ts";
import { ENTRIES, headerOf, MODULES_FALLBACK, sourcesDigest } from "../server/operations/bundle.ts";
import { BUNDLE_DIR, bundleFileOf, serverFile } from "../server/base/files.ts";
import { startTaskOf } from "../bench/setup.ts";

const KEY = "bundle-test-key-0123456789abcdef";
const ROOT = serverFile("../").pathname;
const start = startTaskOf();

async function taskBundle(): Promise<string> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "bundle"],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stderr);
  assert.equal(code, 0, text);
  return text;
}

const call = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, {
    ...init,
    headers: { "x-service-api-key": KEY, "content-type": "application/json" },
  });
  return { status: res.status, bytes: await res.bytes() };
};

Deno.test("deno task start runs the bundles, built once for the sources: a new user's first hour works", async () => {
  assert.equal(start.entry, "server/.bundle/main.js", "the start task runs the bundle");
  assert.ok(start.bundled, "and builds it first");
  assert.doesNotMatch(
    start.v8Flags ?? "",
    /max-semi-space-size/,
    "V8 would apply it over the worker threads' young generation caps (server/base/threads.ts)",
  );
  await taskBundle();
  const digest = await sourcesDigest();
  const files = ENTRIES.map((entry) => serverFile(bundleFileOf(entry)));
  const stamps: number[] = [];
  for (const [i, file] of files.entries()) {
    const text = await Deno.readTextFile(file);
    assert.ok(text.startsWith(headerOf(ENTRIES[i], digest)), `${file.pathname} names the sources`);
    assert.doesNotMatch(text, /[\u0080-\uffff]/, "ASCII alone");
    stamps.push((await Deno.stat(file)).mtime!.getTime());
  }
  // Built already: a second start writes nothing.
  await taskBundle();
  for (const [i, file] of files.entries()) {
    assert.equal((await Deno.stat(file)).mtime!.getTime(), stamps[i], file.pathname);
  }

  const dataDir = await Deno.makeTempDir();
  const target = await startTarget();
  const server = await startServerProcess({
    entry: serverFile(bundleFileOf("main.ts")).pathname,
    cwd: ROOT,
    denoFlags: start.v8Flags ? [`--v8-flags=${start.v8Flags}`] : [],
    env: {
      ...start.env,
      NODE_ENV: "production",
      SERVICE_API_KEY: KEY,
      DATA_DIR: dataDir,
      PROBE_ALLOW_NETWORKS: "127.0.0.1/32",
    },
    output: "capture",
    readyTimeoutMs: 120_000,
  });
  try {
    const base = server.url;
    const document = await call(`${base}/api/v1/openapi.json`);
    assert.equal(document.status, 200);
    assert.deepEqual(document.bytes, readOpenApiJson(), "the generated document, as served");
    for (
      const path of ["/docs", "/docs/swagger-ui.css", "/", "/ui/app.js", "/ui/vendor/preact.mjs"]
    ) {
      assert.equal((await call(`${base}${path}`)).status, 200, path);
    }
    assert.equal(
      (await call(`${base}/api/v1/projects`, {
        method: "POST",
        body: JSON.stringify({ project: "bundled" }),
      })).status,
      201,
    );
    const made = await call(`${base}/api/v1/projects/bundled/probes`, {
      method: "POST",
      body: JSON.stringify({ url: `${target.origin}/ok` }),
    });
    assert.equal(made.status, 201);
    const probe = JSON.parse(new TextDecoder().decode(made.bytes)).data.probe_id;
    let outcome: string | undefined;
    for (let i = 0; i < 100 && outcome === undefined; i++) {
      const results = await call(`${base}/api/v1/projects/bundled/probes/${probe}/results`);
      outcome = JSON.parse(new TextDecoder().decode(results.bytes)).data[0]?.outcome;
      if (outcome === undefined) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(outcome, "up", "the probe thread ran it and the database thread kept it");
    assert.equal((await server.stop()).code, 0);
    assert.match(server.output(), /"msg":"stopped"/);
  } finally {
    server.kill();
    await server.status;
    await target.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("with no bundle built, .bundle/main.js runs the modules", async () => {
  // The fallback's text where the bundles are, under a name of its own.
  await Deno.mkdir(serverFile(BUNDLE_DIR), { recursive: true });
  const file = serverFile(`${BUNDLE_DIR}fallback-${crypto.randomUUID().slice(0, 8)}.js`);
  await Deno.writeTextFile(file, MODULES_FALLBACK);
  const dataDir = await Deno.makeTempDir();
  const server = await startServerProcess({
    entry: file.pathname,
    cwd: ROOT,
    env: { SERVICE_API_KEY: KEY, DATA_DIR: dataDir, RUNNER: "off" },
    readyTimeoutMs: 120_000,
  });
  try {
    assert.equal((await call(`${server.url}/api/v1/projects`)).status, 200);
    assert.equal((await server.stop()).code, 0);
  } finally {
    server.kill();
    await server.status;
    await Deno.remove(file);
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("when deno bundle fails, deno task bundle says why and .bundle/main.js runs the modules", async () => {
  // A copy of the sources with a module that does not parse.
  const copy = await Deno.makeTempDir();
  try {
    const sources = ["server", "shared", "migrations", "deno.json", "deno.lock"];
    const copied = await new Deno.Command("cp", { args: ["-r", ...sources, copy], cwd: ROOT })
      .output();
    assert.ok(copied.success);
    await Deno.remove(`${copy}/server/.bundle`, { recursive: true }).catch(() => {});
    await Deno.writeTextFile(`${copy}/server/domain/broken.ts`, "export const broken = ;\n");
    await Deno.writeTextFile(
      `${copy}/server/main.ts`,
      `import "./domain/broken.ts";\n${await Deno.readTextFile(`${copy}/server/main.ts`)}`,
    );
    // The bundle task's own command, in the copy.
    const command = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks.bundle.command;
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: command.split(/\s+/).slice(1),
      cwd: copy,
      stdout: "null",
      stderr: "piped",
    }).output();
    const warning = new TextDecoder().decode(stderr);
    assert.equal(code, 0, warning);
    assert.match(
      warning,
      /could not build the server's bundle \(error: SyntaxError: [^)]*\): running its modules instead/,
    );
    assert.equal(await Deno.readTextFile(`${copy}/server/.bundle/main.js`), MODULES_FALLBACK);
    const left = [];
    for await (const entry of Deno.readDir(`${copy}/server/.bundle`)) left.push(entry.name);
    assert.deepEqual(left, ["main.js"], "no build folder left behind");
  } finally {
    await Deno.remove(copy, { recursive: true });
  }
});
