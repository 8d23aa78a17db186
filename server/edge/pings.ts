/**
 * The ping URLs of heartbeats: `GET`, `HEAD` or `POST` on `/ping/<token>`, and on
 * `/ping/<token>/start`, `/fail`, `/log` and `/<exit code 0-255>`. No key: the token is the
 * secret. Any path that names no heartbeat is answered as any unknown path is (404, the same
 * bytes whatever the cause). A POST's body is read up to `HEARTBEAT_PING_BODY_MAX` (413 past it;
 * a body that stops arriving is ended by the connection layer) and its first
 * `HEARTBEAT_PING_BODY_KEPT` bytes are kept. Each token may ping `perTokenPerSecond` times a
 * second (429 with `Retry-After` past it). The answer waits for the ping's batch to be committed
 * (`server/runner/heartbeats/batcher.ts`).
 *
 * @module
 */
import {
  HEARTBEAT_PING_BODY_KEPT,
  HEARTBEAT_PING_BODY_MAX,
  PING_PREFIX,
  type PingKind,
} from "@probe/shared";
import { apiError } from "../procedures/errors.ts";
import { restError } from "./answers.ts";
import { createRateLimiter } from "./rate_limit.ts";
import type { PingBatcher } from "../runner/heartbeats/batcher.ts";
import { type Read, readBodyBytes } from "./body.ts";

/** A ping endpoint: answers the requests under `PING_PREFIX`, null for the others. */
export type PingEndpoint = (
  request: Request,
  url: URL,
  address: string | null,
) => Promise<Response | null>;

const TOKEN = /^[A-Za-z0-9_-]{16,64}$/;
const EXIT_CODE = /^(0|[1-9][0-9]{0,2})$/;

/** The ping's kind and exit code from the part after the token; null for no such ping. */
function kindOf(suffix: string | undefined): { kind: PingKind; exitCode: number | null } | null {
  if (suffix === undefined) return { kind: "success", exitCode: null };
  if (suffix === "start" || suffix === "fail" || suffix === "log") {
    return { kind: suffix, exitCode: null };
  }
  if (EXIT_CODE.test(suffix) && Number(suffix) <= 255) {
    return { kind: "exit", exitCode: Number(suffix) };
  }
  return null;
}

/**
 * The body's first `HEARTBEAT_PING_BODY_KEPT` bytes as text (invalid UTF-8 replaced, NULs
 * dropped), and its size.
 */
async function readBody(request: Request): Promise<Read<{ body: string | null; bytes: number }>> {
  if (request.method !== "POST") return { ok: true, value: { body: null, bytes: 0 } };
  const read = await readBodyBytes(request, HEARTBEAT_PING_BODY_MAX);
  if (!read.ok) return read;
  const bytes = read.value.byteLength;
  if (bytes === 0) return { ok: true, value: { body: null, bytes } };
  const body = DECODER.decode(read.value.subarray(0, HEARTBEAT_PING_BODY_KEPT))
    .replaceAll("\0", "");
  return { ok: true, value: { body, bytes } };
}

const OK = "OK\n";
/** Made once: the hot path allocates no more than its answer. */
const DECODER = new TextDecoder();
const OK_HEADERS: HeadersInit = [
  ["content-type", "text/plain; charset=utf-8"],
  ["cache-control", "no-store"],
];

export function createPingEndpoint(
  { batcher, now = Date.now, perTokenPerSecond = 200 }: {
    batcher: PingBatcher;
    /** The heartbeats' clock (ms). */
    now?: () => number;
    /** How often one token may ping (a second); 0 for no limit. */
    perTokenPerSecond?: number;
  },
): PingEndpoint {
  // On the heartbeats' clock, which tests drive.
  const limiter = createRateLimiter({ perSecond: perTokenPerSecond, maxKeys: 100_000, now });
  const notFound = () => restError(apiError("not_found"));
  return async (request, url, address) => {
    if (!url.pathname.startsWith(PING_PREFIX)) return null;
    const [token, suffix, ...more] = url.pathname.slice(PING_PREFIX.length).split("/");
    const kind = kindOf(suffix);
    if (more.length > 0 || !TOKEN.test(token) || !kind) return notFound();
    const admitted = limiter?.take(token) ?? { ok: true };
    if (!admitted.ok) {
      return restError({
        ...apiError("rate_limited"),
        retryAfterSeconds: admitted.retryAfterSeconds,
      });
    }
    const read = await readBody(request);
    if (!read.ok) return restError(read.error);
    const found = await batcher.submit({
      token,
      at: now(),
      ...kind,
      method: request.method,
      address,
      body: read.value.body,
      bodyBytes: read.value.bytes,
    });
    if (found === null) {
      return restError({ ...apiError("rate_limited"), retryAfterSeconds: 1 });
    }
    if (!found) return notFound();
    return new Response(request.method === "HEAD" ? null : OK, { headers: OK_HEADERS });
  };
}
