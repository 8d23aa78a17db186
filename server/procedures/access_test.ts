import assert from "node:assert/strict";
import { ACCESS, accessOf } from "./access.ts";
import { operationsOf } from "./operations_build.ts";
import { appRouter } from "./router.ts";

const PROCEDURES = operationsOf(appRouter).map((o) => o.procedure.join("."));

Deno.test("every procedure of the router has its role rule, and every rule its procedure", () => {
  const ruled = Object.entries(ACCESS).flatMap(([r, rules]) =>
    Object.keys(rules).map((p) => `${r}.${p}`)
  );
  assert.deepEqual(PROCEDURES.filter((p) => !ruled.includes(p)), [], "procedures without a rule");
  assert.deepEqual(ruled.filter((p) => !PROCEDURES.includes(p)), [], "rules without a procedure");
  // A procedure without a rule needs an admin: never open by mistake.
  assert.equal(accessOf("nothing.new"), "admin");
});
