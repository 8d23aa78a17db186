import type { Compilable, CompiledQuery } from "kysely";
import type { Db } from "./database.ts";
import { standsFor } from "./joined.ts";

type Slot = { slot: number } | { value: unknown };

/**
 * A query Kysely builds and compiles once per database, then runs with new parameter values.
 * Building and compiling a query is most of what Kysely costs per request, and the queries on
 * the hot read paths never change shape. `build` must use each argument as a plain value (a
 * comparison, not inside a function or `json()`) and must not branch on the arguments.
 *
 * @example
 * ```ts ignore
 * const projectNamed = prepared((db, name: string) =>
 *   db.selectFrom("projects").selectAll().where("name", "=", name));
 * const rows = await projectNamed(db, "web");
 * ```
 */
export function prepared<Args extends string[], Row>(
  build: (db: Db, ...args: Args) => Compilable<Row>,
): (db: Db, ...args: Args) => Promise<Row[]> {
  const compiled = new WeakMap<Db, { query: CompiledQuery<Row>; slots: Slot[] }>();
  const compile = (db: Db, arity: number) => {
    // Stand-ins that cannot collide with one another, found again among the parameters.
    const marks = Array.from({ length: arity }, (_, i) => `\u0000slot-${i}-${crypto.randomUUID()}`);
    const query = build(db, ...(marks as Args)).compile();
    const slots = query.parameters.map((value): Slot => {
      const slot = marks.indexOf(value as string);
      return slot >= 0 ? { slot } : { value };
    });
    const missing = marks.findIndex((_, i) => !slots.some((s) => "slot" in s && s.slot === i));
    if (missing >= 0) throw new Error(`prepared query does not use argument ${missing} as a value`);
    const entry = { query, slots };
    compiled.set(db, entry);
    return entry;
  };
  return async (db, ...args) => {
    // A joined transaction (a new object each audited write) shares its database's.
    const of = standsFor(db);
    const { query, slots } = compiled.get(of) ?? compile(of, args.length);
    const parameters = slots.map((s) => ("slot" in s ? args[s.slot] : s.value));
    const result = await db.executeQuery<Row>({ ...query, parameters });
    return result.rows;
  };
}
