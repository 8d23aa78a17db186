import assert from "node:assert/strict";
import { buildGenerated, GENERATED_DOCUMENT, GENERATED_OPERATIONS } from "./openapi_generate.ts";

Deno.test("the generated REST operations and document are those the procedures build", async () => {
  const built = await buildGenerated();
  for (
    const [file, now] of [
      [GENERATED_OPERATIONS, built.operations],
      [GENERATED_DOCUMENT, built.document],
    ] as const
  ) {
    const committed = JSON.parse(await Deno.readTextFile(file));
    assert.deepEqual(
      committed,
      JSON.parse(JSON.stringify(now)),
      `${file.pathname} is stale: run \`deno task openapi:generate\``,
    );
  }
});
