import assert from "node:assert/strict";
import { isTimed, longestFirst, mergeJunit } from "./test_e2e.ts";

Deno.test("files under a timed/ folder run alone, the others together", () => {
  assert.ok(isTimed("e2e/timed/connections_test.ts"));
  assert.ok(isTimed("./e2e/timed/outage_test.ts"));
  assert.ok(!isTimed("e2e/server_test.ts"));
  assert.ok(!isTimed("e2e/crash/crash_test.ts"));
  assert.ok(!isTimed("e2e/untimed_test.ts"));
});

Deno.test("mergeJunit keeps every suite of both phases and sums their counts", () => {
  const report = (name: string, tests: number, failures: number, time: string) =>
    `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="deno test" tests="${tests}" failures="${failures}" errors="0" time="${time}">
    <testsuite name="./e2e/${name}" tests="${tests}" disabled="0" errors="0" failures="${failures}">
        <testcase name="a" classname="./e2e/${name}" time="1.000" line="1" col="1">
        </testcase>
    </testsuite>
</testsuites>
`;
  const merged = mergeJunit([
    report("a_test.ts", 2, 0, "10.500"),
    "",
    report("timed/b_test.ts", 3, 1, "2.250"),
  ]);
  assert.match(
    merged,
    /^<\?xml[^>]*>\n<testsuites name="deno test" tests="5" failures="1" errors="0" time="12.750">\n/,
  );
  assert.equal(merged.match(/<testsuite /g)?.length, 2);
  assert.match(
    merged,
    /classname="\.\/e2e\/a_test\.ts"[\s\S]*classname="\.\/e2e\/timed\/b_test\.ts"/,
  );
  assert.ok(merged.endsWith("</testsuites>\n"));
  assert.equal(mergeJunit([]).match(/tests="0"/)?.length, 1);
});

Deno.test("the longest-waiting files start first, the others keep their order", () => {
  assert.deepEqual(
    longestFirst([
      "e2e/a_test.ts",
      "e2e/crash/crash_test.ts",
      "e2e/b_test.ts",
      "e2e/remote_runner_cut_test.ts",
    ]),
    ["e2e/remote_runner_cut_test.ts", "e2e/crash/crash_test.ts", "e2e/a_test.ts", "e2e/b_test.ts"],
  );
});
