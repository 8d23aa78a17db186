/**
 * The common tRPC call, answered without tRPC's generic HTTP resolver: one query by GET or one
 * mutation by POST with a JSON body, no batching, no streaming. The procedure itself is called
 * as tRPC calls it (middlewares, input and output validation; see `trpc/call.ts`), and the
 * answer is built with
 * tRPC's own functions, so it is the answer `fetchRequestHandler` gives, byte for byte
 * (`trpc_fast_path_test.ts` compares the two). Everything else returns null and goes the
 * general way. What this saves per request: the resolver's URL parsing, combined abort
 * signals, content-type dispatch and response assembly (about a fifth of a /trpc read's CPU).
 */
import type { AnyProcedure, AnyRouter } from "@trpc/server";
import {
  getErrorShape,
  getHTTPStatusCode,
  getTRPCErrorFromUnknown,
  transformTRPCResponse,
} from "@trpc/server/unstable-core-do-not-import";
import type { TRPCError } from "@trpc/server";
import { callProcedure } from "./call.ts";
import type { Context } from "./context.ts";

const NEVER_ABORTED = new AbortController().signal;
const HEADERS = { vary: "trpc-accept, accept", "content-type": "application/json" };

export interface FastCall {
  request: Request;
  url: URL;
  /** The procedure path, such as `projects.get`. */
  path: string;
  /** The body already read, for POST. */
  text: string | null;
  ctx: Context;
}

export type FastPath = (call: FastCall) => Promise<Response | null>;

function isJson(request: Request): boolean {
  const type = request.headers.get("content-type")?.toLowerCase();
  return type?.split(";", 1)[0].trim() === "application/json";
}

/** The input of a plain call, or `null` when the call is not one this path answers. */
function plainInput(
  { request, url, text }: FastCall,
  type: string,
): { input: unknown } | null {
  let raw: string | null | undefined;
  if (request.method === "GET" && type === "query") {
    // tRPC reads a GET's input as JSON whether it says so or says nothing.
    if (request.headers.has("content-type") && !isJson(request)) return null;
    raw = url.searchParams.get("input");
  } else if (request.method === "POST" && type === "mutation") {
    if (!isJson(request)) return null;
    raw = text;
  } else return null;
  if (!raw) return { input: undefined };
  try {
    return { input: JSON.parse(raw) };
  } catch {
    return null; // tRPC answers malformed JSON in its own words
  }
}

export function createTrpcFastPath(
  router: AnyRouter,
  { onError, headers: extra = {} }: {
    onError: (error: TRPCError) => void;
    /** Headers to add to every answer (the HTTP layer's own). */
    headers?: Record<string, string>;
  },
): FastPath {
  const headers = { ...HEADERS, ...extra };
  const config = router._def._config;
  const procedures = router._def.procedures as Record<string, AnyProcedure>;
  return async (call) => {
    const { url, path, ctx } = call;
    if (
      path.includes(",") || url.searchParams.has("batch") ||
      url.searchParams.has("connectionParams") || call.request.headers.has("trpc-accept") ||
      !Object.hasOwn(procedures, path)
    ) {
      return null;
    }
    const procedure = procedures[path];
    const type = procedure._def.type;
    const plain = plainInput(call, type);
    if (!plain) return null;
    const input = plain.input === undefined
      ? undefined
      : config.transformer.input.deserialize(plain.input);
    let json;
    let status = 200;
    try {
      const data = await callProcedure(procedure, { ctx, input, path, signal: NEVER_ABORTED });
      json = { result: { data } };
    } catch (cause) {
      const error = getTRPCErrorFromUnknown(cause);
      onError(error);
      json = { error: getErrorShape({ config, ctx, error, input, path, type }) };
      status = getHTTPStatusCode(json, [error]);
    }
    // deno-lint-ignore no-explicit-any
    return new Response(JSON.stringify(transformTRPCResponse(config, json as any)), {
      status,
      headers,
    });
  };
}
