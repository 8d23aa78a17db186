/**
 * The rooms of `server/` keep to their jobs (issue 20): no import loop between the service's
 * modules, and the lower rooms (`domain/`, `runner/`, `alerts/`, `db/`) import nothing from the
 * HTTP edge (`http/`, `rest/`, `trpc/`). Read from the source: relative imports of every module
 * that is not a test or test support.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SERVER = dirname(fileURLToPath(import.meta.url));
const IMPORT = /^(?:import|export)\s+(?:type\s+)?[^;]*?from\s+"(\.[^"]+)"/gms;

async function modules(dir: string, found: Map<string, string[]> = new Map()) {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      if (entry.name !== "testing" && entry.name !== "testdata") await modules(path, found);
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
      const text = await Deno.readTextFile(path);
      const imports = [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(path), m[1])));
      found.set(path, imports);
    }
  }
  return found;
}

const GRAPH = await modules(SERVER);
const room = (path: string) => relative(SERVER, path).split("/")[0];

/** The loops of the graph, each as a path from a module back to itself. */
function loops(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

Deno.test("the rooms' imports are read: the graph holds the service's modules", () => {
  assert.ok(GRAPH.size > 100, `${GRAPH.size} modules`);
  const handler = join(SERVER, "http/handler.ts");
  assert.ok(GRAPH.get(handler)?.includes(join(SERVER, "http/router.ts")));
});

Deno.test("no import loop between the modules of server/", () => {
  const found = loops(GRAPH).map((loop) => loop.map((p) => relative(SERVER, p)).join(" → "));
  assert.deepEqual(found, []);
  // The check finds a loop where there is one.
  const a = join(SERVER, "a.ts");
  const b = join(SERVER, "b.ts");
  assert.equal(loops(new Map([[a, [b]], [b, [a]]])).length, 1);
});

Deno.test("domain/, runner/, alerts/ and db/ import nothing from http/, rest/ or trpc/", () => {
  const lower = new Set(["domain", "runner", "alerts", "db"]);
  const edge = new Set(["http", "rest", "trpc"]);
  const crossing = [...GRAPH].flatMap(([from, imports]) =>
    lower.has(room(from))
      ? imports.filter((to) => edge.has(room(to))).map((to) =>
        `${relative(SERVER, from)} → ${relative(SERVER, to)}`
      )
      : []
  );
  assert.deepEqual(crossing, []);
});
