import assert from "node:assert/strict";
import { fileTimes, tierTimes } from "./slowest_tests.ts";

Deno.test("fileTimes sums each file's tests from a Deno JUnit report, slowest first", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const report = `${dir}/report.xml`;
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["test", "--no-check", `--junit-path=${report}`, "tools/testdata/timed.ts"],
      cwd: new URL("../", import.meta.url).pathname,
      stdout: "null",
      stderr: "null",
    }).output();
    assert.ok(run.success);
    const [file, ...rest] = fileTimes(await Deno.readTextFile(report));
    assert.equal(rest.length, 0);
    assert.equal(file.file, "./tools/testdata/timed.ts");
    assert.equal(file.tests, 2);
    assert.ok(file.seconds >= 0.3 && file.seconds < 5, `${file.seconds} s`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fileTimes sums by file (a helper's suites by the file naming them, steps inside their test), slowest first", () => {
  const xml = `<testsuites>
    <testsuite name="./a_test.ts" tests="1">
      <testcase name="a" classname="./a_test.ts" time="0.5" line="1" col="1"></testcase>
    </testsuite>
    <testsuite name="./b_test.ts" tests="2">
      <testcase name="b1 [pglite]" classname="./helper.ts" time="0.4" line="1" col="1"></testcase>
      <testcase name="b2" classname="./b_test.ts" time="0.3" line="2" col="1"></testcase>
      <testcase name="b1 [pglite] &gt; a step" classname="./helper.ts" time="0.2" line="1" col="1"></testcase>
    </testsuite>
  </testsuites>`;
  const times = fileTimes(xml, (name) => name === "b1" ? "./b_test.ts" : undefined);
  assert.deepEqual(times.map(({ file, tests }) => [file, tests]), [["./b_test.ts", 2], [
    "./a_test.ts",
    1,
  ]]);
  assert.ok(Math.abs(times[0].seconds - 0.7) < 1e-9);
});

Deno.test("tierTimes names test files by the tier's paths, to a tenth of a second, in order", () => {
  assert.deepEqual(
    tierTimes([
      { file: "./server/b_test.ts", seconds: 2.04, tests: 3 },
      { file: "./server/testing/app.ts", seconds: 9, tests: 1 },
      { file: "./cli/a_test.ts", seconds: 12.96, tests: 1 },
    ]),
    { "cli/a_test.ts": 13, "server/b_test.ts": 2 },
  );
  assert.deepEqual(
    Object.keys(tierTimes([
      { file: "./z_test.ts", seconds: 1, tests: 1 },
      { file: "./a_test.ts", seconds: 1, tests: 1 },
    ])),
    ["a_test.ts", "z_test.ts"],
  );
});
