import assert from "node:assert/strict";
import {
  groupFiles,
  parseTierArgs,
  readTierTimes,
  testFiles,
  TIER_ROOTS,
  TIER_TIMES,
  weightsOf,
} from "./test_tier.ts";

Deno.test("groupFiles puts every file in one group, heaviest first to the lightest group", () => {
  const files = [
    { path: "a", weight: 9 },
    { path: "b", weight: 7 },
    { path: "c", weight: 6 },
    { path: "d", weight: 5 },
    { path: "e", weight: 4 },
    { path: "f", weight: 1 },
  ];
  const groups = groupFiles(files, 3);
  assert.deepEqual(groups, [["a", "f"], ["b", "e"], ["c", "d"]]);
  assert.deepEqual(groupFiles(files, 10).length, 6, "no empty group");
  assert.deepEqual(groupFiles([], 4), [[]]);
});

Deno.test("weightsOf takes a file's recorded seconds, and its size at the others' pace", () => {
  const sizes: Record<string, number> = { "a_test.ts": 100, "b_test.ts": 300, "new_test.ts": 200 };
  const sizeOf = (path: string) => sizes[path];
  const files = Object.keys(sizes);
  // a and b: 40 s for 400 bytes, so the new file's 200 bytes weigh 20 s.
  assert.deepEqual(
    weightsOf(files, { "a_test.ts": 30, "b_test.ts": 10, "gone_test.ts": 99 }, sizeOf),
    [
      { path: "a_test.ts", weight: 30 },
      { path: "b_test.ts", weight: 10 },
      { path: "new_test.ts", weight: 20 },
    ],
  );
  assert.deepEqual(
    weightsOf(files, null, sizeOf).map((f) => f.weight),
    [100, 300, 200],
    "without times, sizes",
  );
});

Deno.test("the recorded times name most test files of the tier, by the paths it finds", () => {
  const times = readTierTimes();
  assert.ok(times, `${TIER_TIMES} is missing`);
  const files = TIER_ROOTS.flatMap(testFiles);
  // A file removed since is passed over; one added weighs its size until the times are refreshed.
  const named = files.filter((path) => times[path] !== undefined);
  assert.ok(named.length > files.length / 2, `refresh ${TIER_TIMES} (docs/testing.md)`);
  for (const seconds of Object.values(times)) assert.ok(Number.isFinite(seconds) && seconds >= 0);
});

Deno.test("parseTierArgs keeps --groups, paths that exist, and the rest for deno test", () => {
  const exists = (path: string) => path === "server" || path === "cli/x_test.ts";
  assert.deepEqual(
    parseTierArgs(["--junit-path=r.xml", "server", "--groups", "3", "--filter", "abc"], exists),
    { groups: 3, paths: ["server"], flags: ["--junit-path=r.xml", "--filter", "abc"] },
  );
  assert.deepEqual(parseTierArgs(["--groups=2", "cli/x_test.ts"], exists), {
    groups: 2,
    paths: ["cli/x_test.ts"],
    flags: [],
  });
  assert.throws(() => parseTierArgs(["--groups", "0"], exists), /not a count/);
});

Deno.test("testFiles finds the test files under a folder, and takes a file as given", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/sub`);
    for (const name of ["a_test.ts", "b.test.ts", "test.ts", "helper.ts", "sub/c_test.ts"]) {
      await Deno.writeTextFile(`${dir}/${name}`, "");
    }
    assert.deepEqual(testFiles(dir), [
      `${dir}/a_test.ts`,
      `${dir}/b.test.ts`,
      `${dir}/sub/c_test.ts`,
      `${dir}/test.ts`,
    ]);
    assert.deepEqual(testFiles(`${dir}/helper.ts`), [`${dir}/helper.ts`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the tier runs grouped files, reports each test under its own file, and fails when one fails", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const run = (...files: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-read",
          "--allow-write",
          "--allow-run",
          "--allow-env",
          "tools/test_tier.ts",
          "--groups=2",
          `--junit-path=${dir}/report.xml`,
          ...files,
        ],
        cwd: new URL("../", import.meta.url).pathname,
        stdout: "null",
        stderr: "null",
      }).output();
    const passing = await run("tools/testdata/timed.ts");
    assert.ok(passing.success);
    const report = await Deno.readTextFile(`${dir}/report.xml`);
    assert.match(report, /classname="\.\/tools\/testdata\/timed\.ts"[^>]*>/);
    assert.equal(report.match(/<testcase /g)?.length, 2);

    const failing = await run("tools/testdata/timed.ts", "tools/testdata/failing.ts");
    assert.equal(failing.code, 1);
    const both = await Deno.readTextFile(`${dir}/report.xml`);
    assert.match(both, /classname="\.\/tools\/testdata\/failing\.ts"/);
    assert.equal(both.match(/<testcase /g)?.length, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
