/**
 * One outbound HTTP request under the network policy, redirects followed by hand.
 *
 * Why node:http and not fetch: fetch resolves the host itself, so an address checked beforehand
 * is not necessarily the one it connects to (DNS rebinding). node:http(s) takes a `lookup`
 * function; ours answers with the one address `checkTarget` passed, so the connection goes there
 * and nowhere else, while the URL keeps its host name: the Host header, TLS SNI and certificate
 * verification all use the name, as they must.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { type SecureContext, TLSSocket } from "node:tls";
import { checkTarget, type NetworkPolicy, type Resolver } from "./network_policy.ts";
import { trustedAttempt, type TrustOutcome, UNTRUSTED } from "./trust.ts";

export const MAX_REDIRECTS = 5;
export const MAX_BODY_BYTES = 1024 * 1024;
const USER_AGENT = "probe-service-runner/0.1";

/** Headers that carry credentials: dropped on a redirect to another origin, never recorded. */
export const SECRET_HEADERS = ["authorization", "cookie", "proxy-authorization"] as const;

export interface OutboundRequest {
  url: string;
  method: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array | null;
}

export interface OutboundOptions {
  policy: NetworkPolicy;
  /** Name resolution; the system resolver when not given. */
  resolve?: Resolver;
  /** For the whole exchange: resolution, every hop, and reading the body. */
  timeoutMs: number;
  maxRedirects?: number;
  maxBodyBytes?: number;
  /**
   * Keep the final response's body (its first `maxBodyBytes`) in the result, for assertions
   * on it; otherwise it is read and thrown away.
   */
  keepBody?: boolean;
  /** Read the final https hop's peer certificate (its expiry) into the result. */
  readCertificate?: boolean;
  /** Certificate authorities to trust instead of the system's (PEM): tests use a local one. */
  ca?: string;
  /** A monotonic clock in milliseconds, for durations. */
  elapsed?: () => number;
  /** The `User-Agent` sent unless the request's headers name one (`probeUserAgent`). */
  userAgent?: string;
  /**
   * Told before each request is sent: every hop of a redirect chain (once its address passed
   * the policy). Run-now charges the caller's key with it (`server/runner/run_now.ts`).
   */
  beforeRequest?: () => void;
  /**
   * Connections kept open between requests (`createConnectionPool`): each hop goes through the
   * pool's agent for its origin and checked address. Without it, every request opens its own.
   */
  pool?: ConnectionPool;
}

/** Agents kept per (origin, checked address), bounded, each closed after an idle spell. */
export interface ConnectionPool {
  /**
   * The agent for a hop to `url` connected to `address` (false: none to spare, connect alone),
   * and the function to call once the hop has ended.
   */
  use(url: URL, address: string): { agent: http.Agent | false; release: () => void };
  /** Agents open now. */
  size(): number;
  /** Closes every agent and its connections. */
  close(): void;
}

/** Agents a pool keeps at most; past it, the one idle longest is closed. */
export const POOL_MAX_AGENTS = 256;
/**
 * An agent with nothing in flight this long is closed with its connections: under the 5 s a Node
 * or Deno server keeps an idle connection by default, so a kept one is seldom found closed.
 */
export const POOL_IDLE_MS = 4_000;

interface PooledAgent {
  agent: http.Agent;
  busy: number;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * A pool of keep-alive agents, one per (origin, checked address): a connection is only ever
 * reused for the address the policy passed for it (a name that resolves elsewhere later gets an
 * agent, and connections, of its own), so the pinning holds as without a pool. An agent with
 * requests in flight is never closed (a slow receiver keeps its own until its answer or timeout).
 */
export function createConnectionPool(
  { maxAgents = POOL_MAX_AGENTS, idleMs = POOL_IDLE_MS, maxFreeSockets = 16 } = {},
): ConnectionPool {
  // In use order: the first idle entry is the one idle longest.
  const agents = new Map<string, PooledAgent>();
  const drop = (key: string) => {
    const entry = agents.get(key);
    if (!entry) return;
    clearTimeout(entry.timer);
    agents.delete(key);
    entry.agent.destroy();
  };
  const idleOne = () => [...agents].find(([, e]) => e.busy === 0)?.[0];
  return {
    use(url, address) {
      const key = `${url.protocol}//${url.host}|${address}`;
      let entry = agents.get(key);
      if (entry) agents.delete(key);
      else {
        if (agents.size >= maxAgents) {
          const idle = idleOne();
          if (idle === undefined) return { agent: false, release: () => {} };
          drop(idle);
        }
        const Agent = url.protocol === "https:" ? https.Agent : http.Agent;
        entry = { agent: new Agent({ keepAlive: true, maxFreeSockets }), busy: 0 };
      }
      agents.set(key, entry);
      clearTimeout(entry.timer);
      entry.busy++;
      const held = entry;
      let released = false;
      return {
        agent: held.agent,
        release() {
          if (released) return;
          released = true;
          if (--held.busy > 0 || agents.get(key) !== held) return;
          const timer = setTimeout(() => drop(key), idleMs);
          // An idle agent does not keep the process alive.
          Deno.unrefTimer(timer);
          held.timer = timer;
        },
      };
    },
    size: () => agents.size,
    close() {
      for (const key of [...agents.keys()]) drop(key);
    },
  };
}

/**
 * What came of a request. Expected failures are values: `blocked` (the policy refused an
 * address), `timeout`, and `failed` with a short reason; `network` marks failures below HTTP
 * (DNS, connection, TLS) that are worth one retry. `reason` never holds header values or URLs.
 */
export type OutboundResult =
  | ({ kind: "response"; address: string; durationMs: number; redirects: number } & FinalResponse)
  | { kind: "blocked"; address: string; reason: string; durationMs: number }
  | { kind: "timeout"; address: string | null; reason: string; durationMs: number }
  | {
    kind: "failed";
    address: string | null;
    reason: string;
    network: boolean;
    durationMs: number;
  };

/** What the final hop answered, as assertions see it. Redirect hops are not kept. */
export interface FinalResponse {
  status: number;
  /** Names lower-cased; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  /** The first `maxBodyBytes` of the body when `keepBody` was asked, else null. */
  body: Uint8Array | null;
  /**
   * With `readCertificate`, for an https hop: when its peer certificate stops being valid (null
   * when it could not be read). Null for an http hop, or when not asked.
   */
  certificate: { validTo: Date | null } | null;
}

type Hop =
  | ({ kind: "response"; location: string | null } & FinalResponse)
  | { kind: "error"; reason: string; network: boolean; untrusted: boolean }
  | { kind: "timeout" };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Socket errors in words, by node's code: HTTP's runs and the connecting kinds' say the same. */
export const ERROR_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  ECONNABORTED: "connection aborted",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  ETIMEDOUT: "connection timed out",
};

/**
 * A short reason for a failed exchange: a fixed phrase or an error code, never a message; and
 * whether the peer's chain was refused for an issuer the authorities asked for do not hold.
 */
function describe(error: unknown): { reason: string; network: boolean; untrusted: boolean } {
  const raw = (error as { code?: unknown })?.code;
  // Only what looks like a code is kept: the reason is stored and returned by the API.
  const code = typeof raw === "string" && /^[A-Z][A-Z0-9_]{0,47}$/.test(raw) ? raw : "";
  return { ...reasonOf(error, code), untrusted: UNTRUSTED.has(code) };
}

function reasonOf(error: unknown, code: string): { reason: string; network: boolean } {
  if (ERROR_REASONS[code]) return { reason: ERROR_REASONS[code], network: true };
  if (/CERT|TLS|SSL|SIGNATURE|ALTNAME/.test(code)) return { reason: `TLS: ${code}`, network: true };
  if (code.startsWith("HPE_")) return { reason: "invalid HTTP response", network: true };
  if (code === "ERR_INVALID_CHAR" || code === "ERR_INVALID_HTTP_TOKEN") {
    return { reason: "invalid request header", network: false };
  }
  const name = error instanceof Error ? error.name : "";
  if (/tls|certificate/i.test(name)) return { reason: "TLS: handshake failed", network: true };
  return { reason: code ? `network error ${code}` : "network error", network: true };
}

/** Whether an exchange's peer certificate passed, or was refused for an issuer not trusted. */
function trustOutcome(hop: Hop): TrustOutcome {
  return { passed: hop.kind === "response", untrusted: hop.kind === "error" && hop.untrusted };
}

function sameOrigin(a: URL, b: URL): boolean {
  return a.origin === b.origin;
}

function withoutHeaders(headers: Record<string, string>, names: readonly string[]) {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !names.includes(name.toLowerCase())),
  );
}

/** Response headers by lower-cased name, repeated ones joined with ", " (RFC 9110 5.3). */
function headersOf(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = Object.create(null);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    headers[name] = name in headers ? `${headers[name]}, ${raw[i + 1]}` : raw[i + 1];
  }
  return { ...headers };
}

/** When the peer certificate of a TLS connection expires; null when it cannot be read. */
function certificateExpiry(socket: unknown): Date | null {
  if (!(socket instanceof TLSSocket)) return null;
  const validTo = socket.getPeerCertificate()?.valid_to;
  const time = typeof validTo === "string" ? Date.parse(validTo) : NaN;
  return Number.isNaN(time) ? null : new Date(time);
}

/** The chunks as one array, cut at `max` bytes. */
function concat(chunks: readonly Uint8Array[], max: number): Uint8Array {
  const total = Math.min(max, chunks.reduce((n, c) => n + c.byteLength, 0));
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    if (at >= total) break;
    const part = chunk.subarray(0, total - at);
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** One request and its response, to the one address given, within `timeoutMs`. */
function exchange(
  url: URL,
  target: { hostname: string; address: string; family: 4 | 6 },
  req: { method: string; headers: Record<string, string>; body: string | Uint8Array | null },
  { timeoutMs, maxBodyBytes, keepBody, readCertificate, secureContext, userAgent, agent = false }: {
    timeoutMs: number;
    maxBodyBytes: number;
    keepBody: boolean;
    readCertificate: boolean;
    /** The authorities an `https:` peer's chain must lead to (`trust.ts`). */
    secureContext?: SecureContext;
    userAgent?: string;
    agent?: http.Agent | false;
  },
): Promise<Hop & { reused: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    // deno-lint-ignore prefer-const
    let timer: ReturnType<typeof setTimeout> | undefined;
    /** Whether the request went on a connection kept from an earlier one. */
    let reused = () => false;
    const finish = (hop: Hop) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...hop, reused: reused() });
    };
    const https_ = url.protocol === "https:";
    const headers: Record<string, string> = {
      "user-agent": userAgent ?? USER_AGENT,
      ...req.headers,
    };
    if (req.body !== null) {
      const length = typeof req.body === "string"
        ? new TextEncoder().encode(req.body).byteLength
        : req.body.byteLength;
      headers["content-length"] = String(length);
    }
    let request: http.ClientRequest;
    try {
      request = (https_ ? https : http).request({
        host: target.hostname,
        port: url.port ? Number(url.port) : https_ ? 443 : 80,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers,
        agent,
        // The connection goes to the checked address only, whatever the name resolves to now.
        lookup: (
          _host: string,
          options: { all?: boolean },
          callback: (...args: unknown[]) => void,
        ) => {
          if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
          else callback(null, target.address, target.family);
        },
        ...(https_ && { servername: isIP(target.hostname) ? "" : target.hostname, secureContext }),
        ...(url.username &&
          { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` }),
      } as https.RequestOptions);
    } catch (error) {
      finish({ kind: "error", ...describe(error), network: false });
      return;
    }
    reused = () => request.reusedSocket;
    timer = setTimeout(() => {
      finish({ kind: "timeout" });
      request.destroy();
    }, Math.max(0, timeoutMs));
    request.on("error", (error) => finish({ kind: "error", ...describe(error) }));
    request.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const location = typeof res.headers.location === "string" ? res.headers.location : null;
      const headers = headersOf(res.rawHeaders);
      // Read while the connection is open; only when asked (it costs tens of microseconds).
      const certificate = https_ && readCertificate
        ? { validTo: certificateExpiry(res.socket) }
        : null;
      if (REDIRECTS.has(status) && location !== null) {
        res.destroy();
        finish({ kind: "response", status, location, headers, body: null, certificate });
        return;
      }
      // The body is read up to the cap (the time to read it counts) and kept only when asked.
      let read = 0;
      const chunks: Uint8Array[] = [];
      const done = () =>
        finish({
          kind: "response",
          status,
          location: null,
          headers,
          body: keepBody ? concat(chunks, maxBodyBytes) : null,
          certificate,
        });
      res.on("data", (chunk: Uint8Array) => {
        if (keepBody && read < maxBodyBytes) chunks.push(chunk);
        read += chunk.byteLength;
        if (read >= maxBodyBytes) {
          done();
          res.destroy();
        }
      });
      res.on("end", done);
      res.on("error", (error) => finish({ kind: "error", ...describe(error) }));
      res.on("close", done);
    });
    request.end(req.body ?? undefined);
  });
}

/**
 * Sends a request under the network policy: every hop's host is resolved and every address it
 * resolves to checked, then the connection is made to the checked address; redirects (up to
 * `maxRedirects`) are followed by hand, each hop checked again. Credentials headers are dropped
 * when a redirect leaves the origin; 303 (and 301/302 after a POST) continue as GET without body.
 */
export async function outboundRequest(
  request: OutboundRequest,
  options: OutboundOptions,
): Promise<OutboundResult> {
  const elapsed = options.elapsed ?? (() => performance.now());
  const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const started = elapsed();
  const spent = () => Math.max(0, Math.round(elapsed() - started));
  const remaining = () => options.timeoutMs - (elapsed() - started);

  if (!URL.canParse(request.url)) {
    return { kind: "failed", address: null, reason: "invalid URL", network: false, durationMs: 0 };
  }
  let url = new URL(request.url);
  let method = request.method.toUpperCase();
  let headers = { ...request.headers };
  let body = request.body ?? null;
  let address: string | null = null;
  const timeout = () => ({
    kind: "timeout" as const,
    address,
    reason: `timeout after ${options.timeoutMs} ms`,
    durationMs: spent(),
  });

  for (let hop = 0;; hop++) {
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const check = await Promise.race([
      checkTarget(url, { policy: options.policy, resolve: options.resolve }),
      new Promise<null>((r) => deadline = setTimeout(() => r(null), Math.max(0, remaining()))),
    ]).finally(() => clearTimeout(deadline));
    if (check === null) return timeout();
    if (!check.ok) {
      if (check.kind === "blocked") {
        return {
          kind: "blocked",
          address: check.address,
          reason: check.reason,
          durationMs: spent(),
        };
      }
      return {
        kind: "failed",
        address: null,
        reason: check.reason,
        network: check.kind === "dns",
        durationMs: spent(),
      };
    }
    address = check.address;
    if (remaining() <= 0) return timeout();
    options.beforeRequest?.();
    const send = (agent: http.Agent | false) => {
      const sendWith = (secureContext?: SecureContext) =>
        exchange(url, check, { method, headers, body }, {
          timeoutMs: remaining(),
          maxBodyBytes,
          keepBody: options.keepBody ?? false,
          readCertificate: options.readCertificate ?? false,
          secureContext,
          userAgent: options.userAgent,
          agent,
        });
      // Plain http has no chain to trust: no contexts to choose between.
      if (url.protocol !== "https:") return sendWith();
      const peer = { name: check.hostname, address: check.address, port: url.port || "443" };
      return trustedAttempt(options.ca, peer, sendWith, trustOutcome);
    };
    const lease = options.pool?.use(url, check.address);
    let result = await send(lease?.agent ?? false).finally(() => lease?.release());
    // A kept connection the peer closed while idle fails before any answer: once more on a new
    // connection (the request never reached the receiver).
    if (result.kind === "error" && result.reused && result.reason === "connection reset") {
      result = await send(false);
    }
    if (result.kind === "timeout") return timeout();
    if (result.kind === "error") {
      return {
        kind: "failed",
        address,
        reason: result.reason,
        network: result.network,
        durationMs: spent(),
      };
    }
    if (result.location === null) {
      return {
        kind: "response",
        status: result.status,
        headers: result.headers,
        body: result.body,
        certificate: result.certificate,
        address,
        durationMs: spent(),
        redirects: hop,
      };
    }
    const failed = (reason: string) => ({
      kind: "failed" as const,
      address,
      reason,
      network: false,
      durationMs: spent(),
    });
    if (hop >= maxRedirects) return failed(`more than ${maxRedirects} redirects`);
    if (!URL.canParse(result.location, url)) return failed("invalid redirect location");
    const next = new URL(result.location, url);
    if (next.protocol !== "http:" && next.protocol !== "https:") {
      // Not the scheme itself: the target chose it, and may spell a secret with it.
      return failed("redirect to an unsupported scheme");
    }
    if (
      result.status === 303 && method !== "HEAD" ||
      (result.status === 301 || result.status === 302) && method === "POST"
    ) {
      method = "GET";
      body = null;
      headers = withoutHeaders(headers, ["content-type", "content-length"]);
    }
    if (!sameOrigin(url, next)) headers = withoutHeaders(headers, SECRET_HEADERS);
    url = next;
  }
}
