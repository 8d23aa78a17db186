/**
 * The slowest test files of one or more JUnit reports (`deno test --junit-path=…`), each file's
 * time the sum of its tests' times (files run side by side under `--parallel`, a file's own tests
 * one after another). `.ci/run` prints the slowest ten after the tiers.
 *
 *   deno run --allow-read tools/slowest_tests.ts [--top 10] report.xml [report.xml…]
 *
 * @module
 */
import { parseArgs } from "node:util";

export interface FileTime {
  file: string;
  seconds: number;
  tests: number;
}

/** Each test file's summed time in a Deno JUnit report, slowest first. */
export function fileTimes(xml: string): FileTime[] {
  const byFile = new Map<string, FileTime>();
  // Deno writes each test as one <testcase … classname="FILE" time="SECONDS" …> element.
  for (const [element] of xml.matchAll(/<testcase\b[^>]*>/g)) {
    const file = /\bclassname="([^"]*)"/.exec(element)?.[1];
    const time = Number(/\btime="([^"]*)"/.exec(element)?.[1]);
    if (file === undefined || !Number.isFinite(time)) continue;
    const entry = byFile.get(file) ?? { file, seconds: 0, tests: 0 };
    entry.seconds += time;
    entry.tests += 1;
    byFile.set(file, entry);
  }
  return [...byFile.values()].sort((a, b) => b.seconds - a.seconds);
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { top: { type: "string", default: "10" } },
    allowPositionals: true,
  });
  const all = positionals.flatMap((path) => {
    try {
      return fileTimes(Deno.readTextFileSync(path));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
  }).sort((a, b) => b.seconds - a.seconds);
  const top = all.slice(0, Number(values.top));
  console.log(`Slowest ${top.length} test files (sum of their tests' times):`);
  for (const { file, seconds, tests } of top) {
    console.log(`${seconds.toFixed(1).padStart(8)} s  ${String(tests).padStart(3)} tests  ${file}`);
  }
}
