import assert from "node:assert/strict";
import { BUNDLED, bundleFileOf, serverFile, threadEntry } from "./files.ts";

Deno.test("files: the server's files are found from server/, as modules", async () => {
  assert.equal(BUNDLED, false);
  for (const path of ["edge/openapi.gen.json", "storage/pglite_template.tar.br", "ui/app.js"]) {
    assert.ok((await Deno.stat(serverFile(path))).isFile, path);
  }
  for (const module of ["runner/execute_worker.ts", "storage/pglite_worker.ts"] as const) {
    const entry = threadEntry(module);
    assert.ok(entry.pathname.endsWith(`/server/${module}`), entry.href);
    assert.ok((await Deno.stat(entry)).isFile, module);
  }
  assert.equal(bundleFileOf("runner/execute_worker.ts"), ".bundle/execute_worker.js");
  assert.equal(bundleFileOf("main.ts"), ".bundle/main.js");
});
