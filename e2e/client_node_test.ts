// The npm package as its users get it: `deno task build:client` packs it, a project outside the
// workspace installs the tarball with npm, type-checks a call with tsc and runs it with Node 20
// against a live server; a Deno app in the same project does the same with `deno check`/`run`.
import assert from "node:assert/strict";
import { startLiveServer } from "../server/testing/live.ts";

const TYPESCRIPT = "6.0.3";
const TYPES_NODE = "20.19.43";
const ROOT = new URL("../", import.meta.url).pathname;

async function run(cmd: string, args: string[], cwd: string) {
  const output = await new Deno.Command(cmd, { args, cwd, stdin: "null" }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { ...output, out: text(output.stdout), err: text(output.stderr) };
}

async function must(cmd: string, args: string[], cwd: string): Promise<string> {
  const result = await run(cmd, args, cwd);
  assert.ok(result.success, `${cmd} ${args.join(" ")} failed:\n${result.err}\n${result.out}`);
  return result.out;
}

async function nodeMajor(): Promise<number | null> {
  try {
    const { success, out } = await run("node", ["--version"], ROOT);
    return success ? Number(out.trim().replace(/^v/, "").split(".")[0]) : null;
  } catch {
    return null;
  }
}

const major = await nodeMajor();
// CI has Node (it installs Deno with npm), so there a missing one is a failure.
const inCi = Boolean(Deno.env.get("CI"));
if (major === null && !inCi) {
  console.warn("node_test: node is missing, the npm package is not tested");
}

Deno.test({
  name: "the packed client installs, type-checks and runs in Node 20 and in Deno",
  ignore: major === null && !inCi,
  async fn() {
    assert.ok(major !== null, "node and npm are needed for this test");
    assert.ok(major >= 20, `Node ${major} is older than 20`);
    const work = await Deno.makeTempDir({ prefix: "probe-client-node-" });
    const server = await startLiveServer();
    try {
      const out = `${work}/dist`;
      const built = await must(Deno.execPath(), ["task", "-q", "build:client", "--out", out], ROOT);
      const tarball = built.trim().split("\n").at(-1)!;
      assert.match(tarball, /probe-client-\d+\.\d+\.\d+\.tgz$/);

      const listing = await must("tar", ["-tzf", tarball], work);
      assert.deepEqual(listing.trim().split("\n").sort(), [
        "package/README.md",
        "package/api_types.d.ts",
        "package/client.d.ts",
        "package/error.d.ts",
        "package/mod.d.ts",
        "package/mod.js",
        "package/package.json",
      ]);

      const app = `${work}/app`;
      await Deno.mkdir(app);
      for (const name of ["index.ts", "deno_app.ts", "tsconfig.json"]) {
        await Deno.copyFile(
          new URL(`./testdata/package_app/${name}`, import.meta.url),
          `${app}/${name}`,
        );
      }
      await Deno.writeTextFile(
        `${app}/package.json`,
        JSON.stringify({
          name: "probe-client-node-app",
          private: true,
          type: "module",
          dependencies: { "@probe/client": `file:${tarball}` },
          devDependencies: { typescript: TYPESCRIPT, "@types/node": TYPES_NODE },
        }),
      );
      await must("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], app);
      const installed = JSON.parse(
        await Deno.readTextFile(`${app}/node_modules/@probe/client/package.json`),
      );
      assert.equal(installed.dependencies, undefined, "the package needs nothing else");

      await must("npx", ["--no-install", "tsc", "-p", "."], app);
      const result = JSON.parse(
        await must("node", ["dist/index.js", server.url, server.apiKey], app),
      );
      assert.deepEqual(result, {
        created: result.created,
        label: "From Node",
        probeCreated: true,
        probeCount: 1,
        statsWindow: "7d",
        statsRuns: 0,
        boardCount: 1,
        intervalIsNumber: true,
        conflict: "409 conflict",
      });
      assert.match(result.created, /^node-\d+$/);

      // Deno, outside the workspace, on the package from node_modules: --allow-net is enough.
      await must(Deno.execPath(), ["check", "--quiet", "deno_app.ts"], app);
      const fromDeno = JSON.parse(
        await must(
          Deno.execPath(),
          ["run", "--allow-net=127.0.0.1", "deno_app.ts", server.url, server.apiKey],
          app,
        ),
      );
      assert.deepEqual(fromDeno, { channels: true, missing: "404 not_found" });

      // A wrong call is a type error in the Node project too.
      await Deno.writeTextFile(
        `${app}/index.ts`,
        `import { createProbeClient } from "@probe/client";\n` +
          `createProbeClient({ baseUrl: "http://x", apiKey: "k" }).probes.get({ project: "p" });\n`,
      );
      const broken = await run("npx", ["--no-install", "tsc", "-p", "."], app);
      assert.ok(!broken.success, "tsc accepted a call without probeId");
      assert.match(broken.out, /probeId/);
    } finally {
      await server.close();
      await Deno.remove(work, { recursive: true });
    }
  },
});
