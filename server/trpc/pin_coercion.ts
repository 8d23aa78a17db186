import type { AnyRouter } from "@trpc/server";

const COERCIBLE = new Set(["number", "boolean", "bigint", "date"]);

interface ZodLike {
  _zod?: { def: Record<string, unknown> & { type: string } };
}

/**
 * The REST bridge switches on `coerce` for every number, boolean, bigint and date in an input
 * object on each request, bodies included, so `"false"` would pass as `true`. This pins the flag
 * of every such schema to what it was declared with (query schemas use `z.coerce` on purpose).
 */
export function pinCoercion(router: AnyRouter): void {
  const seen = new Set<unknown>();
  const visit = (schema: unknown) => {
    if (!schema || typeof schema !== "object" || seen.has(schema)) return;
    seen.add(schema);
    const def = (schema as ZodLike)._zod?.def;
    if (!def) return;
    const pinned = Object.getOwnPropertyDescriptor(def, "coerce")?.get !== undefined;
    if (COERCIBLE.has(def.type) && !pinned) {
      const declared = def.coerce === true;
      Object.defineProperty(def, "coerce", {
        get: () => declared,
        set: () => {},
        configurable: false,
      });
    }
    for (const value of Object.values(def)) {
      if (Array.isArray(value)) value.forEach(visit);
      else if (value && typeof value === "object") {
        visit(value);
        // Object shapes are plain records of schemas.
        if (!(value as ZodLike)._zod) Object.values(value).forEach(visit);
      }
    }
  };
  for (const procedure of Object.values(router._def.procedures)) {
    // deno-lint-ignore no-explicit-any
    for (const input of (procedure as any)._def.inputs ?? []) visit(input);
  }
}
