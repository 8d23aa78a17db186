/**
 * `deno task test`: the in-process tier, its test files run in a few groups, one isolate a group.
 *
 * Deno gives each test file an isolate of its own, and a file that builds the app spends ~0.7 s of
 * CPU before its first test (its imports, then the first embedded database's WebAssembly); with
 * 180 files that was a third of the tier's CPU on 2 cores. Here each group is a generated module
 * importing some of the files, so a group pays that once; the groups run side by side
 * (`--parallel`), all at once, since their tests wait on timers, local servers and PostgreSQL.
 * Test names, JUnit reports and sanitizers stay per file (Deno files a test under the module that
 * called `Deno.test`).
 *
 *   deno task test [--groups N] [deno test flags, with `=`…] [file or folder…]
 *
 * Folders default to the tier's (server shared client cli tools); flags other than `--groups` go
 * to `deno test`. One file alone is also `deno test --config deno.dev.json -A that_test.ts`.
 *
 * @module
 */

/** The folders the tier tests when given none. */
export const TIER_ROOTS = ["server", "shared", "client", "cli", "tools"];

/** What `deno test` runs with: type-checked once by CI's `deno check`, so not again here. */
const TEST_FLAGS = [
  "--config=deno.dev.json",
  "--no-check",
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-sys",
  "--allow-run",
  "--allow-ffi=/lib,/usr/lib,/lib64,/usr/lib64",
  "--parallel",
];

/**
 * Groups, all run at once (`DENO_JOBS` sets both). On 2 cores, 8 kept both busy to the last ~15 s:
 * 6 groups took 126 s, 8 took 103, 12 took 108, 16 run 8 at a time 108 (both databases).
 */
const DEFAULT_JOBS = 8;

const isTestFile = (name: string) => /(^|[._])test\.(ts|tsx|mts|js|mjs|jsx)$/.test(name);

/** The test files under `path` (itself, when it is one), sorted. */
export function testFiles(path: string): string[] {
  const info = Deno.statSync(path);
  if (info.isFile) return [path];
  const found: string[] = [];
  for (const entry of Deno.readDirSync(path)) {
    const child = `${path}/${entry.name}`;
    if (entry.isDirectory) found.push(...testFiles(child));
    else if (entry.isFile && isTestFile(entry.name)) found.push(child);
  }
  return found.sort();
}

/**
 * Each file's seconds in a full run of the tier (both databases), which groups are balanced by:
 * written by `tools/slowest_tests.ts --save` from a JUnit report. A file it does not name weighs
 * what its size says at the seconds per byte of the files it names.
 */
export const TIER_TIMES = "tools/tier_times.json";

/**
 * The weight of each file: its seconds in `times` (keys as `testFiles` gives paths, without
 * `./`), or its size at the named files' seconds per byte; its size alone without `times`.
 */
export function weightsOf(
  files: string[],
  times: Record<string, number> | null,
  sizeOf: (path: string) => number,
): { path: string; weight: number }[] {
  const named = files.filter((path) => times?.[path] !== undefined);
  const namedBytes = named.reduce((sum, path) => sum + sizeOf(path), 0);
  const namedSeconds = named.reduce((sum, path) => sum + times![path], 0);
  const perByte = namedBytes > 0 && namedSeconds > 0 ? namedSeconds / namedBytes : 1;
  return files.map((path) => ({ path, weight: times?.[path] ?? sizeOf(path) * perByte }));
}

/** The times of {@link TIER_TIMES}, or null when there is no such file. */
export function readTierTimes(path = TIER_TIMES): Record<string, number> | null {
  try {
    return JSON.parse(Deno.readTextFileSync(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * Files spread over `count` groups of about equal weight (a file's seconds, {@link weightsOf}):
 * heaviest first, each to the lightest group so far.
 */
export function groupFiles(
  files: { path: string; weight: number }[],
  count: number,
): string[][] {
  const groups = Array.from({ length: Math.max(1, Math.min(count, files.length)) }, () => ({
    files: [] as string[],
    weight: 0,
  }));
  const heaviestFirst = [...files].sort((a, b) =>
    b.weight - a.weight || (a.path < b.path ? -1 : 1)
  );
  for (const file of heaviestFirst) {
    const lightest = groups.reduce((min, group) => group.weight < min.weight ? group : min);
    lightest.files.push(file.path);
    lightest.weight += file.weight;
  }
  return groups.map((group) => group.files.sort());
}

/** Splits the command line into our `--groups`, the paths to test, and flags for `deno test`. */
export function parseTierArgs(
  args: string[],
  exists: (path: string) => boolean,
): { groups?: number; paths: string[]; flags: string[] } {
  let groups: number | undefined;
  const paths: string[] = [];
  const flags: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = arg === "--groups"
      ? args[++i]
      : arg.startsWith("--groups=")
      ? arg.slice(9)
      : null;
    if (value !== null) {
      groups = Number(value);
      if (!Number.isInteger(groups) || groups < 1) {
        throw new Error(`--groups: not a count: ${value}`);
      }
    } else if (!arg.startsWith("-") && exists(arg)) paths.push(arg);
    else flags.push(arg);
  }
  return { groups, paths, flags };
}

/** Whether a path exists (a test path given on the command line, a folder of the tier). */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Runs `deno test` with `args`, its output to ours; its exit code. */
export async function denoTest(args: string[], env: Record<string, string> = {}): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), { args: ["test", ...args], env, stdin: "null" })
    .spawn();
  return (await child.status).code;
}

if (import.meta.main) {
  let parsed;
  try {
    parsed = parseTierArgs(Deno.args, exists);
  } catch (error) {
    console.error(`test tier: ${(error as Error).message}`);
    Deno.exit(2);
  }
  const { paths, flags } = parsed;
  const files = (paths.length ? paths : TIER_ROOTS.filter(exists)).flatMap(testFiles);
  const jobs = Number(Deno.env.get("DENO_JOBS")) || DEFAULT_JOBS;
  const count = parsed.groups ?? jobs;
  const groups = groupFiles(
    weightsOf(files, readTierTimes(), (path) => Deno.statSync(path).size),
    count,
  );
  const dir = await Deno.makeTempDir({ prefix: "probe-monitor-tier-" });
  let code = 1;
  try {
    const entries = [];
    for (const [index, group] of groups.entries()) {
      const entry = `${dir}/group_${String(index + 1).padStart(2, "0")}_test.ts`;
      const imports = group.map((file) =>
        `import ${JSON.stringify(new URL(file, `file://${Deno.cwd()}/`).href)};`
      );
      await Deno.writeTextFile(entry, imports.join("\n") + "\n");
      entries.push(entry);
    }
    code = await denoTest([...TEST_FLAGS, ...flags, ...entries], { DENO_JOBS: String(jobs) });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  Deno.exit(code);
}
