/**
 * The slowest test files of one or more JUnit reports (`deno test --junit-path=…`), each file's
 * time the sum of its tests' times (files run side by side under `--parallel`, a file's own tests
 * one after another). `.ci/run` prints the slowest ten after the tiers.
 *
 *   deno run --allow-read tools/slowest_tests.ts [--top 10] report.xml [report.xml…]
 *   deno run --allow-read --allow-write tools/slowest_tests.ts --save tools/tier_times.json tier.xml
 *
 * `--save` writes each file's time (`tierTimes`), which `deno task test` balances its groups by.
 *
 * @module
 */
import { parseArgs } from "node:util";

export interface FileTime {
  file: string;
  seconds: number;
  tests: number;
}

/**
 * Each test file's summed time in a Deno JUnit report, slowest first. Deno files a test under the
 * file that called `Deno.test`; for suites a shared helper defines (`apiSuite` in
 * server/testing/app.ts) that is the helper's file, so `locate` may name the file a test's name
 * comes from (its database suffix, " [pglite]" or " [postgres]", left off).
 */
export function fileTimes(
  xml: string,
  locate: (testName: string) => string | undefined = () => undefined,
): FileTime[] {
  const byFile = new Map<string, FileTime>();
  for (const [element] of xml.matchAll(/<testcase\b[^>]*>/g)) {
    const attribute = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(element)?.[1];
    const caller = attribute("classname");
    const time = Number(attribute("time"));
    if (caller === undefined || !Number.isFinite(time)) continue;
    const fullName = unescapeXml(attribute("name") ?? "");
    // A step ("test > step") is reported beside its test, whose time already holds it.
    if (fullName.includes(" > ")) continue;
    const name = fullName.replace(/ \[(pglite|postgres)\]$/, "");
    const file = caller.endsWith("_test.ts") ? caller : locate(name) ?? caller;
    const entry = byFile.get(file) ?? { file, seconds: 0, tests: 0 };
    entry.seconds += time;
    entry.tests += 1;
    byFile.set(file, entry);
  }
  return [...byFile.values()].sort((a, b) => b.seconds - a.seconds);
}

/**
 * The times `deno task test` balances its groups by (`TIER_TIMES` of `test_tier.ts`): each test
 * file's seconds, to a tenth, by its path as the tier finds it (no `./`), in path order.
 */
export function tierTimes(times: FileTime[]): Record<string, number> {
  const entries = times.filter(({ file }) => file.endsWith("_test.ts"))
    .map(({ file, seconds }) => [file.replace(/^\.\//, ""), Math.round(seconds * 10) / 10] as const)
    .sort(([a], [b]) => a < b ? -1 : 1);
  return Object.fromEntries(entries);
}

function unescapeXml(text: string): string {
  return text.replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

/** The test file under `dirs` whose text holds `name` in quotes (the suite's name), if one does. */
export function testFileLocator(dirs: string[]): (name: string) => string | undefined {
  const texts: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.name.endsWith("_test.ts")) {
        texts.push([`./${path}`, Deno.readTextFileSync(path)]);
      }
    }
  };
  for (const dir of dirs) {
    try {
      walk(dir);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return (name) =>
    texts.find(([, text]) =>
      [`"${name}"`, `'${name}'`, `\`${name}\``].some((q) => text.includes(q))
    )
      ?.[0];
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { top: { type: "string", default: "10" }, save: { type: "string" } },
    allowPositionals: true,
  });
  const locate = testFileLocator(["server", "shared", "client", "cli", "tools", "e2e"]);
  const all = positionals.flatMap((path) => {
    try {
      return fileTimes(Deno.readTextFileSync(path), locate);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
  }).sort((a, b) => b.seconds - a.seconds);
  if (values.save) {
    const times = tierTimes(all);
    Deno.writeTextFileSync(values.save, JSON.stringify(times, null, 2) + "\n");
    console.log(`Saved the times of ${Object.keys(times).length} files to ${values.save}`);
  }
  const top = all.slice(0, Number(values.top));
  console.log(`Slowest ${top.length} test files (sum of their tests' times):`);
  for (const { file, seconds, tests } of top) {
    console.log(`${seconds.toFixed(1).padStart(8)} s  ${String(tests).padStart(3)} tests  ${file}`);
  }
}
