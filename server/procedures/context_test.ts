import assert from "node:assert/strict";
import { toApiError } from "./errors.ts";
import { freshDatabase } from "../testing/app.ts";
import { createContext } from "./context.ts";
import { createCallerFactory } from "./init.ts";
import { appRouter } from "./router.ts";

Deno.test("without a valid key a caller reaches no procedure's data", async () => {
  const handle = await freshDatabase("pglite");
  try {
    const caller = createCallerFactory(appRouter)(
      createContext({ db: handle.db, authenticated: false }),
    );
    const calls: [string, () => Promise<unknown>][] = [
      ["projects.list", () => caller.projects.list({})],
      ["projects.create", () => caller.projects.create({ project: "sneaky" })],
      ["probes.list", () => caller.probes.list({})],
      ["settings.getIamAlive", () => caller.settings.getIamAlive({})],
      ["settings.testIamAlive", () => caller.settings.testIamAlive({})],
    ];
    for (const [name, call] of calls) {
      const failure = await call().then(() => null, (e: unknown) => e);
      assert.equal(toApiError(failure).status, 401, name);
    }
    const authed = createCallerFactory(appRouter)(
      createContext({ db: handle.db, authenticated: true }),
    );
    assert.deepEqual(await authed.projects.list({}), {
      data: [],
      meta: { count: 0, next_after: null },
    });
  } finally {
    await handle.close();
  }
});
