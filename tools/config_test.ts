import assert from "node:assert/strict";

// deno.json holds what the service runs (so a first `deno task start` fetches nothing else);
// deno.dev.json is the same workspace plus the test and tool packages, with a lock of its own.
// Deno has no `extends`: this keeps the two from drifting apart.
const read = async (name: string) =>
  JSON.parse(await Deno.readTextFile(new URL(`../${name}`, import.meta.url)));

Deno.test("deno.dev.json is deno.json plus development packages", async () => {
  const runtime = await read("deno.json");
  const dev = await read("deno.dev.json");
  for (const [name, specifier] of Object.entries(runtime.imports)) {
    assert.equal(dev.imports[name], specifier, `deno.dev.json maps ${name} as deno.json does`);
  }
  for (const field of ["workspace", "nodeModulesDir", "allowScripts", "fmt", "exclude", "lint"]) {
    assert.deepEqual(dev[field], runtime[field], field);
  }
  assert.equal(dev.lock, "./deno.dev.lock");
});
