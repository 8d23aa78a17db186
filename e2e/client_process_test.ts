/**
 * The typed client from outside the test process: what `deno info` says its run-time module graph
 * holds, and a script using it run with nothing but `--allow-net`.
 */
import assert from "node:assert/strict";
import { startLiveServer } from "../server/testing/live.ts";

Deno.test("the client's run-time module graph holds no server code", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("../client/mod.ts", import.meta.url).pathname],
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  const info = JSON.parse(new TextDecoder().decode(output.stdout));
  const modules = new Map<string, { dependencies?: { code?: { specifier: string } }[] }>(
    // deno-lint-ignore no-explicit-any
    info.modules.map((m: any) => [m.specifier, m]),
  );
  const loaded = new Set<string>();
  const visit = (specifier: string) => {
    if (loaded.has(specifier)) return;
    loaded.add(specifier);
    for (const dep of modules.get(specifier)?.dependencies ?? []) {
      if (dep.code) visit(info.redirects?.[dep.code.specifier] ?? dep.code.specifier);
    }
  };
  visit(info.roots[0]);
  const local = [...loaded].filter((s) => s.startsWith("file:"));
  assert.ok(local.length >= 3, `the walk found too little: ${local.join(", ")}`);
  const server = local.filter((s) => s.includes("/server/") || s.includes("/shared/"));
  assert.deepEqual(server, []);
  // The type-only import of the router is there, and is skipped.
  assert.ok(modules.has(new URL("../server/procedures/router.ts", import.meta.url).href));
});

Deno.test("the client works with --allow-net alone", async () => {
  const server = await startLiveServer();
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net=127.0.0.1",
        new URL("../client/testdata/net_only.ts", import.meta.url).pathname,
        server.url,
        server.apiKey,
      ],
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.ok(output.success, stderr);
    const settings = JSON.parse(new TextDecoder().decode(output.stdout));
    assert.equal(typeof settings.interval_hours, "number");
  } finally {
    await server.close();
  }
});
