/**
 * `deno task test:e2e`: the end-to-end tier, in two phases.
 *
 * Its files mostly wait on real seconds (subprocesses starting, a link cut for two minutes,
 * Chromium), so run one at a time they left the 2 cores four-fifths idle (13 min 17 s); three at
 * once took 6 min 34 s, four 5 min 46 s on the same machine the same morning. Files in
 * `e2e/timed/` bound how long the service takes to answer or to give up, so they run afterwards,
 * one at a time, with the machine to themselves.
 *
 *   deno task test:e2e [deno test flags, with `=`…] [file or folder…]
 *
 * Folders default to `e2e`. A `--junit-path=` report holds both phases.
 *
 * @module
 */
import { denoTest, exists, parseTierArgs, testFiles } from "./test_tier.ts";

const E2E_FLAGS = ["--config=deno.dev.json", "--no-check", "--allow-all"];

/** Files at once in the first phase (`DENO_JOBS` sets it). */
const DEFAULT_JOBS = 4;

/**
 * Files that wait longest (a link cut for two minutes, crashes and restarts, a walkthrough),
 * started first so that none of them is left running alone at the end of the first phase: it
 * ended with a minute and a half of one file and idle processors when they came in name order.
 */
const LONGEST = [
  "remote_runner_cut_test.ts",
  "crash/crash_test.ts",
  "oncall_walkthrough_test.ts",
  "remote_runner_test.ts",
];

/** `files` with the longest-waiting ones first, the rest in their order. */
export function longestFirst(files: string[]): string[] {
  const rank = (file: string) => {
    const index = LONGEST.findIndex((name) => file.endsWith(`/${name}`));
    return index === -1 ? LONGEST.length : index;
  };
  return files.map((file, order) => ({ file, order, rank: rank(file) }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order).map(({ file }) => file);
}

/** Whether a test file is one of those that run alone (under a `timed/` folder). */
export const isTimed = (file: string) => /(^|\/)timed\//.test(file);

/** One JUnit report of several of Deno's: their suites under one root, its counts summed. */
export function mergeJunit(reports: string[]): string {
  const totals = { tests: 0, failures: 0, errors: 0, time: 0 };
  const suites: string[] = [];
  for (const report of reports) {
    const root = /<testsuites\b([^>]*)>([\s\S]*)<\/testsuites>/.exec(report);
    if (!root) continue;
    for (const key of Object.keys(totals) as (keyof typeof totals)[]) {
      totals[key] += Number(new RegExp(`\\b${key}="([^"]*)"`).exec(root[1])?.[1] ?? 0);
    }
    suites.push(root[2].replace(/^\n+|\s+$/g, ""));
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="deno test" tests="${totals.tests}" failures="${totals.failures}" ` +
    `errors="${totals.errors}" time="${totals.time.toFixed(3)}">\n` +
    suites.filter(Boolean).map((suite) => `${suite}\n`).join("") + `</testsuites>\n`;
}

if (import.meta.main) {
  const { paths, flags } = parseTierArgs(Deno.args, exists);
  const files = (paths.length ? paths : ["e2e"]).flatMap(testFiles);
  const junit = flags.find((flag) => flag.startsWith("--junit-path="))?.slice(13);
  const others = flags.filter((flag) => !flag.startsWith("--junit-path="));
  const jobs = Number(Deno.env.get("DENO_JOBS")) || DEFAULT_JOBS;
  const phases = [
    { files: longestFirst(files.filter((file) => !isTimed(file))), args: ["--parallel"], jobs },
    { files: files.filter(isTimed), args: [], jobs: 1 },
  ].filter((phase) => phase.files.length);
  let failed = false;
  const reports: string[] = [];
  for (const [index, phase] of phases.entries()) {
    const report = junit && `${junit}.${index + 1}`;
    const code = await denoTest(
      [
        ...E2E_FLAGS,
        ...phase.args,
        ...others,
        ...(report ? [`--junit-path=${report}`] : []),
        ...phase.files,
      ],
      { DENO_JOBS: String(phase.jobs) },
    );
    failed ||= code !== 0;
    if (report) {
      reports.push(await Deno.readTextFile(report).catch(() => ""));
      await Deno.remove(report).catch(() => {});
    }
  }
  if (junit) await Deno.writeTextFile(junit, mergeJunit(reports));
  Deno.exit(failed ? 1 : 0);
}
