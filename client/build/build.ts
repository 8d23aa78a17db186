/**
 * `deno task build:client [--out DIR]`: builds the client's npm package into DIR/client (an ES
 * module bundle and standalone `.d.ts` files) and packs it with `npm pack` into
 * DIR/probe-client-VERSION.tgz. DIR defaults to `dist`. Prints the tarball's path last.
 */
import { parseArgs } from "node:util";
import { buildDeclarations, checkStandalone } from "./declarations.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
/** What the declarations step copies of the workspace: the client's type graph and its config. */
const WORKSPACE_PARTS = ["deno.json", "deno.lock", "shared", "server", "client", "migrations"];

async function run(cmd: string, args: string[], options: { cwd?: string } = {}): Promise<string> {
  const output = await new Deno.Command(cmd, { args, cwd: options.cwd, stdin: "null" }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  if (!output.success) {
    throw new Error(
      `${cmd} ${args.join(" ")} failed:\n${decode(output.stderr)}${decode(output.stdout)}`,
    );
  }
  return decode(output.stdout);
}

async function readVersion(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}/client/deno.json`));
  return config.version;
}

/** The bundle names the files it came from by their place in Deno's cache: keep only the package. */
function tidyBundle(js: string): string {
  return js.replace(/^\/\/ .*?\/registry\.npmjs\.org\/(.*)$/gm, "// $1")
    .replace(/^\/\/ (?:\.\.\/)+(?:[\w.-]+\/)*?(client|shared)\//gm, "// $1/");
}

async function bundle(packageDir: string): Promise<void> {
  const out = `${packageDir}/mod.js`;
  await run(Deno.execPath(), [
    "bundle",
    "--quiet",
    "--platform=browser",
    "--format=esm",
    `--output=${out}`,
    `${ROOT}/client/mod.ts`,
  ], { cwd: ROOT });
  await Deno.writeTextFile(out, tidyBundle(await Deno.readTextFile(out)));
}

async function declarations(packageDir: string): Promise<void> {
  const workspace = await Deno.makeTempDir({ prefix: "probe-client-types-" });
  try {
    for (const part of WORKSPACE_PARTS) {
      await run("cp", ["-r", `${ROOT}/${part}`, `${workspace}/`]);
    }
    // A node_modules of the locked packages, from Deno's cache, for the TypeScript compiler.
    await run(Deno.execPath(), ["install", "--quiet", "--node-modules-dir=auto", "--frozen"], {
      cwd: workspace,
    });
    const denoTypes = `${workspace}/deno.d.ts`;
    await Deno.writeTextFile(denoTypes, await run(Deno.execPath(), ["types"]));
    const files = buildDeclarations({ workspace, denoTypes });
    for (const [name, text] of Object.entries(files)) {
      await Deno.writeTextFile(`${packageDir}/${name}`, text);
    }
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
}

function packageJson(version: string) {
  return {
    name: "@probe/client",
    version,
    description: "Typed client of the probe service: projects, probes and I'm alive settings",
    type: "module",
    main: "./mod.js",
    types: "./mod.d.ts",
    exports: { ".": { types: "./mod.d.ts", default: "./mod.js" } },
    files: ["mod.js", "*.d.ts", "README.md"],
    sideEffects: false,
    engines: { node: ">=20" },
    license: "UNLICENSED",
  };
}

/** Builds and packs the package; answers the tarball's path. */
export async function buildClientPackage(outDir: string): Promise<string> {
  const version = await readVersion();
  const packageDir = `${outDir}/client`;
  await Deno.remove(packageDir, { recursive: true }).catch(() => {});
  await Deno.mkdir(packageDir, { recursive: true });
  await bundle(packageDir);
  await declarations(packageDir);
  await Deno.writeTextFile(
    `${packageDir}/package.json`,
    `${JSON.stringify(packageJson(version), null, 2)}\n`,
  );
  await Deno.copyFile(`${ROOT}/client/README.md`, `${packageDir}/README.md`);
  checkStandalone(packageDir);
  const packed = JSON.parse(
    await run("npm", ["pack", "--json", "--pack-destination", outDir], { cwd: packageDir }),
  );
  return `${outDir}/${packed[0].filename}`;
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" } } });
  const outDir = values.out ?? `${ROOT}/dist`;
  await Deno.mkdir(outDir, { recursive: true });
  const tarball = await buildClientPackage(await Deno.realPath(outDir));
  console.log(tarball);
}
