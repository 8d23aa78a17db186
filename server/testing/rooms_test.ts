/**
 * The rooms of `server/` keep to their layers: each room imports only rooms below it in `LAYERS`,
 * so no import runs back up, and no module imports itself round a loop. Read from the source:
 * the relative imports of every module that is not a test or test support. The README's layout
 * table names each room.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SERVER = dirname(dirname(fileURLToPath(import.meta.url)));
const ROOT = dirname(SERVER);
// An import or export statement's clause (names in braces, a namespace, a default), then its
// relative module: not the text of a string that spells one.
const IMPORT =
  /^(?:import|export)\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+)\s+from\s+"(\.[^"]+)"/gm;

/** From the top down: a room may import the rooms after it, never one before it. */
const LAYERS = [
  "main.ts",
  "app.ts",
  "operations",
  "edge",
  "procedures",
  "runner",
  "domain",
  "alerting",
  "storage",
  "base",
  "ui",
  "deno.json",
  "testing",
];

async function modules(dir: string, found: Map<string, string[]> = new Map()) {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      const skipped = entry.name === "testing" || entry.name === "testdata" ||
        entry.name[0] === ".";
      if (!skipped) await modules(path, found);
    } else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith("_test.ts")) {
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

/** The imports of a graph that run up the layers, as "from → to". */
function upward(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([from, imports]) =>
    imports.filter((to) => {
      const [a, b] = [LAYERS.indexOf(room(from)), LAYERS.indexOf(room(to))];
      return b !== -1 && b < a;
    }).map((to) => `${relative(SERVER, from)} → ${relative(SERVER, to)}`)
  );
}

Deno.test("the rooms' imports are read: the graph holds the service's modules", () => {
  assert.ok(GRAPH.size > 100, `${GRAPH.size} modules`);
  const handler = join(SERVER, "edge/handler.ts");
  assert.ok(GRAPH.get(handler)?.includes(join(SERVER, "edge/router.ts")));
});

Deno.test("server/ holds only the named rooms, few enough to name", async () => {
  const entries: string[] = [];
  // Hidden entries are what a build writes (`.bundle/`, which git ignores), not rooms.
  for await (const entry of Deno.readDir(SERVER)) {
    if (!entry.name.startsWith(".")) entries.push(entry.name);
  }
  assert.deepEqual(entries.filter((name) => !LAYERS.includes(name)), []);
  assert.ok(entries.length <= 14, `${entries.length} entries`);
  const readme = await Deno.readTextFile(join(ROOT, "README.md"));
  const unnamed = entries.filter((name) => !readme.includes(`server/${name}`));
  assert.deepEqual(unnamed, [], "the README's layout table names every room");
});

Deno.test("no import loop between the modules of server/", () => {
  const found = loops(GRAPH).map((loop) => loop.map((p) => relative(SERVER, p)).join(" → "));
  assert.deepEqual(found, []);
  // The check finds a loop where there is one.
  const a = join(SERVER, "a.ts");
  const b = join(SERVER, "b.ts");
  assert.equal(loops(new Map([[a, [b]], [b, [a]]])).length, 1);
});

Deno.test("no room imports a room above it", () => {
  assert.deepEqual(upward(GRAPH), []);
  // The check finds an import that runs up.
  const low = join(SERVER, "storage/x.ts");
  assert.deepEqual(upward(new Map([[low, [join(SERVER, "edge/y.ts")]]])), [
    "storage/x.ts → edge/y.ts",
  ]);
});
