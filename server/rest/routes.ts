/**
 * The REST bridge's routing, built once: each OpenAPI procedure's method and path template
 * become a matcher, and a matched request calls the procedure the way the bridge does (path
 * parameters over query or body, then the procedure, through `trpc/call.ts`). What it skips
 * per request is the bridge's generic work: parsing the URL again, walking the input schema to
 * switch on coercion (pinned off anyway, see `pin_coercion.ts`), and building a tRPC caller (a
 * tree of proxies) to reach one procedure. `rest_routes_test.ts` checks that the answers are the
 * bridge's. Procedures whose input the bridge treats specially (arrays in a query, several
 * inputs) are left to the bridge.
 */
import type { AnyProcedure, AnyRouter } from "@trpc/server";
import { callProcedure } from "../trpc/call.ts";
import type { Context } from "../trpc/context.ts";

interface Route {
  pattern: RegExp;
  procedure: AnyProcedure;
  path: string;
  /** False when the bridge must answer: its input handling for this one is not repeated here. */
  direct: boolean;
}

export type Dispatch =
  | { handled: false }
  | { handled: true; ok: true; data: unknown }
  | { handled: true; ok: false; error: unknown };

interface ZodLike {
  _zod?: { def: { type: string; shape?: Record<string, ZodLike>; innerType?: ZodLike } };
}

const kind = (schema: ZodLike | undefined) => schema?._zod?.def.type;

/** An object input without array fields: the bridge passes it through as it is. */
function isPlainObjectInput(procedure: AnyProcedure): boolean {
  const inputs = (procedure._def as { inputs: ZodLike[] }).inputs;
  if (inputs.length !== 1 || kind(inputs[0]) !== "object") return false;
  return Object.values(inputs[0]._zod!.def.shape ?? {}).every((field) => {
    const inner = kind(field) === "optional" ? field._zod!.def.innerType : field;
    return kind(inner) !== "array";
  });
}

/** The bridge's path matcher: `{name}` is one segment, matched without regard to case. */
function patternOf(template: string): RegExp {
  const normalized = `/${template.replace(/^\/|\/$/g, "")}`;
  return new RegExp(`^${normalized.replace(/\{(.+?)\}/g, (_, key) => `(?<${key}>[^/]+)`)}$`, "i");
}

/** The bridge's query input: one value as a string, repeated ones as an array. */
function queryInput(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? values[0] : values;
  }
  return query;
}

export function createRestRoutes(
  router: AnyRouter,
): (
  call: {
    method: string;
    path: string;
    url: URL;
    contentType: string | null;
    body: unknown;
    ctx: Context;
  },
) => Promise<Dispatch> {
  const routes = new Map<string, Route[]>();
  for (
    const [path, procedure] of Object.entries(
      router._def.procedures as Record<string, AnyProcedure>,
    )
  ) {
    const openapi =
      (procedure._def.meta as { openapi?: { method: string; path: string; enabled?: boolean } })
        ?.openapi;
    if (!openapi || openapi.enabled === false || procedure._def.type === "subscription") continue;
    const list = routes.get(openapi.method) ?? [];
    list.push({
      pattern: patternOf(openapi.path),
      procedure,
      path,
      direct: isPlainObjectInput(procedure),
    });
    routes.set(openapi.method, list);
  }
  const NOT_HANDLED: Dispatch = { handled: false };

  return async ({ method, path, url, contentType, body, ctx }) => {
    const normalized = `/${path.replace(/^\/|\/$/g, "")}`;
    let route: Route | undefined;
    let params: Record<string, string> | undefined;
    for (const candidate of routes.get(method) ?? []) {
      const match = candidate.pattern.exec(normalized);
      if (match) {
        route = candidate;
        params = match.groups;
        break;
      }
    }
    if (!route || !route.direct) return NOT_HANDLED;
    const usesBody = method !== "GET" && method !== "DELETE";
    // The bridge refuses other bodies itself (the HTTP layer has refused them already).
    if (usesBody && !contentType?.startsWith("application/json")) return NOT_HANDLED;
    const input = { ...(usesBody ? body as object : queryInput(url)), ...params };
    try {
      const data = await callProcedure(route.procedure, { ctx, input, path: route.path });
      return { handled: true, ok: true, data };
    } catch (error) {
      return { handled: true, ok: false, error };
    }
  };
}
