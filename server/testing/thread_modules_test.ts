/**
 * Each worker thread is an isolate of its own that compiles and keeps every module it loads, so
 * the threads load only what they run: no zod, whose schemas (the shared package's root builds all
 * of them) would cost the probe thread some 10 MiB of heap. Read from `deno info --json`,
 * following the imports that load code (an `import type` loads nothing).
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

interface ModuleGraph {
  roots: string[];
  modules: { specifier: string; dependencies?: { code?: { specifier?: string } }[] }[];
}

/** The modules that loading `path` (from the repository's root) runs. */
async function loaded(path: string): Promise<string[]> {
  const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", path],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
  }).output();
  assert.ok(success, new TextDecoder().decode(stderr));
  const graph: ModuleGraph = JSON.parse(new TextDecoder().decode(stdout));
  const imports = new Map(
    graph.modules.map((m) => [
      m.specifier,
      (m.dependencies ?? []).flatMap((d) => d.code?.specifier ?? []),
    ]),
  );
  const seen = new Set<string>();
  const next = [...graph.roots];
  for (let at = next.pop(); at !== undefined; at = next.pop()) {
    if (seen.has(at)) continue;
    seen.add(at);
    next.push(...imports.get(at) ?? []);
  }
  return [...seen];
}

const schemas = (modules: string[]) =>
  modules.filter((m) => /^npm:\/?zod@/.test(m) || m.endsWith("/shared/mod.ts"));

for (const thread of ["server/runner/execute_worker.ts", "server/storage/pglite_worker.ts"]) {
  Deno.test(`${thread} loads no schema`, async () => {
    const modules = await loaded(thread);
    assert.ok(modules.some((m) => m.endsWith(thread)), modules.join("\n"));
    assert.deepEqual(schemas(modules), []);
  });
}

Deno.test("the check sees a schema where one is loaded", async () => {
  const modules = await loaded("shared/mod.ts");
  assert.equal(schemas(modules).length, 2, schemas(modules).join("\n"));
});
