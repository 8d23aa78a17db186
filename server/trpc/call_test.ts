import assert from "node:assert/strict";
import { initTRPC, TRPCError } from "@trpc/server";
import { z } from "zod";
import { callProcedure } from "./call.ts";

const t = initTRPC.context<{ user: string }>().create();
const withRole = t.middleware(({ next }) => next({ ctx: { role: "admin" } }));
const doubled = t.middleware(({ next, input }) =>
  next({ input: { ...(input as object), twice: true } })
);
const router = t.router({
  echo: t.procedure.use(withRole).input(z.object({ n: z.number() })).use(doubled)
    .output(z.object({ user: z.string(), role: z.string(), n: z.number(), twice: z.boolean() }))
    .query(({ ctx, input }) => ({
      user: ctx.user,
      role: ctx.role,
      n: input.n,
      twice: (input as { twice?: boolean }).twice ?? false,
      extra: "dropped by the output schema",
    })),
  fails: t.procedure.mutation(() => {
    throw new TRPCError({ code: "CONFLICT", message: "taken" });
  }),
  breaksOutput: t.procedure.output(z.object({ a: z.string() }))
    .query(() => ({ a: 1 }) as unknown as { a: string }),
});
const caller = t.createCallerFactory(router)({ user: "ann" });

/** Both ways: tRPC's caller and ours, outcome for outcome. */
async function both(path: "echo" | "fails" | "breaksOutput", input: unknown) {
  const settle = (p: Promise<unknown>) =>
    p.then(
      (data) => ({ data }),
      (e: TRPCError) => ({ code: e.code, message: e.message, cause: e.cause?.constructor.name }),
    );
  // deno-lint-ignore no-explicit-any
  const theirs = await settle((caller as any)[path](input));
  const ours = await settle(
    callProcedure(router._def.procedures[path], { ctx: { user: "ann" }, input, path }),
  );
  return { theirs, ours };
}

Deno.test("a procedure called directly behaves as through tRPC's caller", async () => {
  for (
    const [path, input] of [
      ["echo", { n: 2 }],
      ["echo", { n: "2" }],
      ["echo", undefined],
      ["fails", undefined],
      ["breaksOutput", undefined],
    ] as const
  ) {
    const { theirs, ours } = await both(path, input);
    assert.deepEqual(ours, theirs, `${path} ${JSON.stringify(input)}`);
  }
  const { ours } = await both("echo", { n: 2 });
  assert.deepEqual(ours, { data: { user: "ann", role: "admin", n: 2, twice: true } });
});
