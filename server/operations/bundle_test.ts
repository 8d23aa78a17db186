import assert from "node:assert/strict";
import { asciiOnly, externalPackages, headerOf, sourcesDigest } from "./bundle.ts";

Deno.test("asciiOnly: the code means the same, in ASCII alone", () => {
  const code = [
    `["…", 'naïve — ok', \`tail…\${1 + 1}\`]`,
    `[/…+/.test("……"), /[é😀]/u.test("😀"), /\\u00e9/.test("é")]`,
    `(() => { const café = "ü"; return café; })()`,
  ];
  for (const source of code) {
    const ascii = asciiOnly(source);
    assert.doesNotMatch(ascii, /[\u0080-\uffff]/, ascii);
    assert.deepEqual((0, eval)(ascii), (0, eval)(source), source);
  }
  assert.equal(asciiOnly("plain"), "plain");
});

Deno.test("externalPackages: every npm package but the bundled ones and their paths", () => {
  const imports = {
    "zod": "npm:zod@4",
    "zod/": "npm:/zod@4/",
    "kysely": "npm:kysely@0.29",
    "kysely/migration": "npm:kysely@0.29/migration",
    "@trpc/server": "npm:@trpc/server@11",
    "@trpc/server/": "npm:/@trpc/server@11/",
    "hono/": "npm:/hono@4/",
    "@electric-sql/pglite": "npm:@electric-sql/pglite@0.5",
    "preact/": "npm:/preact@11/",
    "preact": "npm:preact@11",
    "@probe/local": "./local/mod.ts",
  };
  assert.deepEqual(externalPackages(imports), ["@electric-sql/pglite", "preact"]);
});

Deno.test("sourcesDigest: moves with any source or the import map, not with the bundles", async () => {
  const root = await Deno.makeTempDir();
  const at = (path: string) => new URL(path, `file://${root}/`);
  try {
    for (const dir of ["server/edge", "shared", "migrations", "server/.bundle/build.1"]) {
      await Deno.mkdir(at(dir), { recursive: true });
    }
    const files: Record<string, string> = {
      "deno.json": "{}",
      "deno.lock": "{}",
      "server/main.ts": "export {};",
      "server/edge/a.ts": "export const a = 1;",
      "shared/b.ts": "export const b = 2;",
      "migrations/c.ts": "export const c = 3;",
    };
    for (const [path, text] of Object.entries(files)) await Deno.writeTextFile(at(path), text);
    const tree = at("");
    const first = await sourcesDigest(tree);
    assert.match(first, /^[0-9a-f]{32}$/);
    // What a build writes is not a source.
    await Deno.writeTextFile(at("server/.bundle/main.js"), "// built");
    await Deno.writeTextFile(at("server/.bundle/build.1/main.js"), "// being built");
    assert.equal(await sourcesDigest(tree), first);
    for (const path of ["server/edge/a.ts", "shared/b.ts", "migrations/c.ts", "deno.lock"]) {
      const before = await Deno.readTextFile(at(path));
      await Deno.writeTextFile(at(path), `${before} `);
      assert.notEqual(await sourcesDigest(tree), first, path);
      await Deno.writeTextFile(at(path), before);
    }
    await Deno.writeTextFile(at("shared/new.ts"), "");
    assert.notEqual(await sourcesDigest(tree), first, "a new file");
    assert.equal(
      headerOf("main.ts", first),
      `// deno task bundle: server/main.ts, sources ${first}\n`,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
