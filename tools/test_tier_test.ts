import assert from "node:assert/strict";
import { groupFiles, parseTierArgs, testFiles } from "./test_tier.ts";

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
