/**
 * The dashboard's modules (`server/ui/*.js`, plain JavaScript served as it is) pass `deno check`:
 * their `// @ts-check` and JSDoc types, with their API calls typed by the OpenAPI document's
 * generated types (docs/dashboard.md, "Type checking"). `deno check --config deno.dev.json .` (CI,
 * `deno task ok`) checks the same modules with the same configuration; this test also shows on a
 * copy that the check does fail on a wrong field, a wrong body field and a path the API lacks. It
 * is in the end-to-end tier because each `deno check` takes a minute on a busy machine.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const UI = "server/ui/";
/** What the dashboard's types read besides server/ui itself. */
const OPENAPI_TYPES = "server/ui/openapi.gen.ts";

async function deno(args: string[], cwd: URL): Promise<{ success: boolean; text: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const decoder = new TextDecoder();
  return {
    success: output.success,
    text: decoder.decode(output.stdout) + decoder.decode(output.stderr),
  };
}

/** The names of the files in server/ui that `deno check` reads: modules, declarations, config. */
async function uiFiles(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(new URL(UI, ROOT))) {
    if (entry.isFile && /\.js$|\.d\.ts$|^deno\.json$/.test(entry.name)) names.push(entry.name);
  }
  return names.sort();
}

Deno.test("the dashboard's modules pass deno check", async () => {
  const modules = (await uiFiles()).filter((name) => name.endsWith(".js"));
  assert.ok(modules.length >= 10, modules.join(", "));
  const { success, text } = await deno(
    ["check", "--config", "deno.dev.json", ...modules.map((name) => UI + name)],
    ROOT,
  );
  assert.ok(success, text);
});

/** Wrong calls written into a copy of the dashboard, and what `deno check` must say of each. */
const MISTAKES = [
  {
    file: "overview.js",
    from: "millis(probe.last_duration_ms)",
    to: "millis(probe.last_duration)",
    error: /Property 'last_duration' does not exist on type/,
  },
  {
    file: "project.js",
    from: "{ status: next }",
    to: "{ state: next }",
    error: /'state' does not exist in type/,
  },
  {
    file: "probe.js",
    from: "get(`/incidents?project=",
    to: "get(`/incident?project=",
    // Not a path of the document (or, inside a generic call, one no operation matches).
    error: /not assignable to parameter of type 'PathFor<"get">'|Expected 2 arguments, but got 1/,
  },
];

Deno.test("a misspelled field, body field or path in a copy of the dashboard fails the check", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dashboard-types-" });
  const copy = new URL(`file://${dir}/`);
  try {
    // The dashboard and the types it reads, laid out as in the repository, with the same
    // packages; server/ui keeps its own compilerOptions as a member of the copy's workspace.
    const root = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
    await Deno.writeTextFile(
      new URL("deno.json", copy),
      JSON.stringify({
        workspace: ["./server/ui"],
        nodeModulesDir: "none",
        lock: false,
        imports: root.imports,
      }),
    );
    await Deno.mkdir(new URL(UI, copy), { recursive: true });
    await Deno.mkdir(new URL("server/edge/testdata/", copy), { recursive: true });
    await Deno.copyFile(new URL(OPENAPI_TYPES, ROOT), new URL(OPENAPI_TYPES, copy));
    for (const name of await uiFiles()) {
      let text = await Deno.readTextFile(new URL(UI + name, ROOT));
      for (const mistake of MISTAKES.filter((m) => m.file === name)) {
        assert.ok(text.includes(mistake.from), `${name} no longer holds ${mistake.from}`);
        text = text.replace(mistake.from, mistake.to);
      }
      await Deno.writeTextFile(new URL(UI + name, copy), text);
    }

    const { success, text } = await deno(
      ["check", "--config", "deno.json", ...MISTAKES.map((m) => UI + m.file)],
      copy,
    );
    assert.equal(success, false, text);
    for (const mistake of MISTAKES) {
      // Each reported at its own line, which the diagnostic quotes.
      assert.ok(text.includes(mistake.to), `${mistake.file}: ${mistake.to}\n${text}`);
      assert.match(text, mistake.error, `${mistake.file}: ${mistake.to}\n${text}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
