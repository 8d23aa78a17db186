/**
 * Builds the bundles `deno task start` runs (`deno task bundle`): `server/main.ts` and the entries
 * of its two threads, each one file in `server/.bundle/` (`main.js`, `execute_worker.js`,
 * `pglite_worker.js`; `server/base/files.ts` finds them).
 *
 * Why: Deno hands V8 each TypeScript module transpiled with an inline source map that carries the
 * module's source, and V8 keeps the map's text twice; the service's own modules took 6.6 MiB of the
 * server's heap that way, a bundle of them a tenth of it (docs/performance.md, "Memory"). A bundle
 * holds the service's modules and the ES module packages it is built on ({@link BUNDLED_PACKAGES});
 * every other package stays an import, loaded as `deno run` loads it, with its files where the
 * package has them (PGlite's WebAssembly, the dashboard's and Swagger UI's files).
 *
 * Not minified: esbuild would then rename every function and class, and keeping their names
 * (`--keep-names`) wraps each function made in a call that names it; the REST read cost 1.55-1.69x
 * the stack floor's CPU so, 1.32-1.37x without (docs/performance.md). Names stay as written, and
 * the bundle is 2.3 MB instead of 1.3, 1 MiB more of heap in text, about what the wrappers took.
 *
 * A bundle is written only when a source changed: its first line names the digest of every file
 * under `server/`, `shared/` and `migrations/` and of the import map it was built from. Characters
 * beyond ASCII are written as escapes: one of them makes V8 keep the whole text at two bytes a
 * character. When `deno bundle` fails (esbuild, which it fetches from npm on first use, cannot be
 * had), `.bundle/main.js` runs the modules instead and a warning says why; the next start tries
 * again.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { BUNDLE_DIR, bundleFileOf, serverFile } from "../base/files.ts";

/** What is bundled, by path below `server/`: the server, and what its threads start from. */
export const ENTRIES = ["main.ts", "runner/execute_worker.ts", "storage/pglite_worker.ts"];

/** The packages bundled with the service's modules: ES modules that name no file of their own. */
export const BUNDLED_PACKAGES = ["zod", "kysely", "@trpc/server", "hono"];

const ROOT = serverFile("../");
const SOURCE_DIRS = ["server/", "shared/", "migrations/"];
const IMPORT_MAP_FILES = ["deno.json", "deno.lock"];

/** `code` with every character beyond ASCII written as a `\uXXXX` escape (one per UTF-16 unit). */
export function asciiOnly(code: string): string {
  return code.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** The package a specifier names: `kysely` of `kysely/migration`, `@trpc/server` of its paths. */
function packageOf(specifier: string): string {
  return specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");
}

/**
 * The names of the import map (`imports` of the root `deno.json`) a bundle leaves as imports:
 * every package's but those of {@link BUNDLED_PACKAGES}, whose paths are bundled with them (one
 * copy of each package, not two).
 */
export function externalPackages(imports: Record<string, string>): string[] {
  const names = Object.entries(imports)
    .filter(([, target]) => /^(npm|jsr):/.test(target))
    .map(([name]) => name.replace(/\/$/, ""))
    .filter((name) => !BUNDLED_PACKAGES.includes(packageOf(name)));
  return [...new Set(names)].sort();
}

/** The digest of the sources and the import map, as the bundles' first line names it. */
export async function sourcesDigest(root: URL = ROOT): Promise<string> {
  const files: string[] = [...IMPORT_MAP_FILES];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(new URL(dir, root))) {
      const path = `${dir}${entry.name}`;
      // Not the bundles, nor what a build is writing: `.bundle/`, as every hidden entry.
      if (entry.name.startsWith(".")) continue;
      if (entry.isDirectory) await walk(`${path}/`);
      else if (entry.isFile) files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) await walk(dir);
  files.sort();
  const digest = createHash("sha256");
  for (const path of files) {
    digest.update(`${path}\0`);
    digest.update(await Deno.readFile(new URL(path, root)));
  }
  return digest.digest("hex").slice(0, 32);
}

/** The first line of a bundle built from the sources of `digest`. */
export function headerOf(entry: string, digest: string): string {
  return `// deno task bundle: server/${entry}, sources ${digest}\n`;
}

/** The first line of `file`, its newline included, read alone; null when there is no file. */
async function firstLine(file: URL): Promise<string | null> {
  let opened: Deno.FsFile;
  try {
    opened = await Deno.open(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  try {
    // A header is under 100 bytes: a start reads that much of each bundle, not 2 MB.
    const head = new Uint8Array(256);
    const read = await opened.read(head) ?? 0;
    const text = new TextDecoder().decode(head.subarray(0, read));
    return text.slice(0, text.indexOf("\n") + 1);
  } finally {
    opened.close();
  }
}

/** Writes `text` to `file` whole or not at all (a start beside this one reads one or the other). */
async function replaceFile(file: URL, text: string): Promise<void> {
  const temporary = new URL(`${file.href}.${Deno.pid}.tmp`);
  await Deno.writeTextFile(temporary, text);
  await Deno.rename(temporary, file);
}

/** Runs `deno bundle` for every entry into `outDir`; the error's text when it fails. */
async function runDenoBundle(outDir: string, externals: string[]): Promise<string | null> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform=deno",
      ...externals.flatMap((name) => ["--external", name]),
      "--outdir",
      outDir,
      ...ENTRIES.map((entry) => serverFile(entry).pathname),
    ],
    cwd: ROOT.pathname,
    // Its error lines without colours, to be quoted in the warning.
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code === 0) return null;
  // Its first error line says what failed ("error: SyntaxError: …"); the last ones are a backtrace.
  const lines = new TextDecoder().decode(stderr).split("\n");
  return lines.find((line) => line.startsWith("error: ")) ?? `deno bundle exited with ${code}`;
}

/** `.bundle/main.js` when no bundle could be built: the server, run as modules. */
export const MODULES_FALLBACK = "// deno task bundle: not built, the next start tries again\n" +
  'import { run } from "../main.ts";\nawait run();\n';

export type BundleOutcome = "current" | "built" | "modules";

/**
 * Makes the bundles current: nothing when they were built from these sources, else builds them.
 * "modules" when `deno bundle` failed and `.bundle/main.js` now runs the modules.
 */
export async function bundle(warn: (text: string) => void = console.warn): Promise<BundleOutcome> {
  const digest = await sourcesDigest();
  const files = ENTRIES.map((entry) => serverFile(bundleFileOf(entry)));
  const lines = await Promise.all(files.map(firstLine));
  if (lines.every((line, i) => line === headerOf(ENTRIES[i], digest))) return "current";

  const imports = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).imports ?? {};
  // Where this may write, and the digest does not read.
  await Deno.mkdir(serverFile(BUNDLE_DIR), { recursive: true });
  const outDir = serverFile(`${BUNDLE_DIR}build.${Deno.pid}`).pathname;
  try {
    const failure = await runDenoBundle(outDir, externalPackages(imports));
    if (failure !== null) {
      warn(`could not build the server's bundle (${failure}): running its modules instead`);
      await replaceFile(files[0], MODULES_FALLBACK);
      return "modules";
    }
    // Each entry's output is named as its module, in the folders below the common one.
    for (const [i, entry] of ENTRIES.entries()) {
      const code = await Deno.readTextFile(`${outDir}/${entry.replace(/\.ts$/, ".js")}`);
      await replaceFile(files[i], headerOf(entry, digest) + asciiOnly(code));
    }
    return "built";
  } finally {
    // A build that failed early made no folder.
    await Deno.remove(outDir, { recursive: true }).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  }
}

if (import.meta.main) {
  const started = performance.now();
  const outcome = await bundle();
  if (outcome === "built") {
    console.error(`built the server's bundle in ${Math.round(performance.now() - started)} ms`);
  }
}
