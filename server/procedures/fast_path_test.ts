import assert from "node:assert/strict";
import { createSessions, DEFAULT_SESSION_LIFETIMES } from "../domain/access/sessions.ts";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { probeIdOf } from "../domain/probe_id.ts";
import { buildOpenApiDocument } from "../edge/openapi.ts";
import { REST_PREFIX, TRPC_PREFIX } from "../edge/handler.ts";
import { SECURITY_HEADERS } from "../edge/answers.ts";
import { createTrpcEndpoint } from "../edge/trpc_endpoint.ts";
import { freshDatabase, startTestApp, TEST_API_KEY } from "../testing/app.ts";
import type { DatabaseHandle, Db } from "../storage/database.ts";
import { createTrpcFastPath } from "./fast_path.ts";
import { DEFAULT_MAX_ANSWER_BYTES } from "./answer_size.ts";
import { createRunNow } from "../runner/run_now.ts";
import { createContext } from "./context.ts";
import { configuredPrincipals } from "../domain/access/api_key.ts";
import { procedureTypes } from "../testing/document.ts";
import { appRouter } from "./router.ts";

const BASE = "http://service.test/trpc";
const PROCEDURES = procedureTypes(buildOpenApiDocument(appRouter, REST_PREFIX));

interface Sent {
  path: string;
  /** The input; sent as `?input=` for a query and as the body of a mutation. */
  input?: unknown;
  /** Raw text instead of `input`. */
  raw?: string;
  type?: string;
}

function requestOf(s: Sent, withKey: boolean): Request {
  const query = PROCEDURES.get(s.path) === "query";
  const text = s.raw ?? (s.input === undefined ? undefined : JSON.stringify(s.input));
  const headers: Record<string, string> = withKey ? { "x-service-api-key": TEST_API_KEY } : {};
  if (!query) headers["content-type"] = s.type ?? "application/json";
  else if (s.type) headers["content-type"] = s.type;
  const search = query && text !== undefined ? `?input=${encodeURIComponent(text)}` : "";
  return new Request(`${BASE}/${s.path}${search}`, {
    method: query ? "GET" : "POST",
    headers,
    body: query ? undefined : text,
  });
}

/** A query sent as a batch of one call (`?batch=1&input={"0":…}`). */
function batchOf(s: Sent): Request {
  const text = s.raw ?? (s.input === undefined ? undefined : JSON.stringify(s.input));
  const input = text === undefined ? "{}" : `{"0":${text}}`;
  return new Request(`${BASE}/${s.path}?batch=1&input=${encodeURIComponent(input)}`, {
    headers: { "x-service-api-key": TEST_API_KEY },
  });
}

/** Run-now over `db` for calls that never get as far as running (a missing probe, bad input). */
const unrun = (db: Db) =>
  createRunNow({ db, execute: () => Promise.reject(new Error("no run was expected")) });

/** An answer to compare; times (such as a window's start) are of the moment, so masked. */
async function answer(response: Response) {
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    vary: response.headers.get("vary"),
    body: (await response.text()).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>"),
  };
}

/** The keys list's configured keys, as the test app has them (`TEST_API_KEY`). */
const CONFIGURED_KEYS = configuredPrincipals([TEST_API_KEY]).map((c) => c.principal);

/** A call's context over `handle`, as the configured key's (the one `TEST_API_KEY` names). */
const contextOver = (handle: DatabaseHandle) =>
  createContext({
    db: handle.db,
    authenticated: true,
    // The key the requests carry: whoami names it.
    principal: CONFIGURED_KEYS[0],
    services: {
      runNow: unrun(handle.db),
      databaseKind: handle.kind,
      configuredKeys: CONFIGURED_KEYS,
      sessions: createSessions({
        db: handle.db,
        lifetimes: DEFAULT_SESSION_LIFETIMES,
        keyPrincipal: () => null,
      }),
    },
  });

/**
 * `/trpc` as the service answers a call once its key is checked (`createTrpcEndpoint`) over
 * `handle`: with its fast path, or (`procedures: false`) with tRPC's handler answering all but
 * the streamed lists. The fast path's answers are told to `taken`; the security headers are added
 * where missing, as the edge's middleware adds them.
 */
function trpcOver(
  handle: DatabaseHandle,
  { procedures = true, taken = [] }: { procedures?: boolean; taken?: string[] } = {},
): (request: Request) => Promise<Response> {
  const fast = createTrpcFastPath({
    router: appRouter,
    onError: () => {},
    headers: SECURITY_HEADERS,
    procedures,
  });
  const endpoint = createTrpcEndpoint({
    router: appRouter,
    endpoint: TRPC_PREFIX,
    fastPath: async (call) => {
      const answer = await fast(call);
      if (answer) taken.push(call.path);
      return answer;
    },
    onError: () => {},
    maxAnswerBytes: DEFAULT_MAX_ANSWER_BYTES,
  });
  return async (request) => {
    const url = new URL(request.url);
    const procedure = url.pathname.slice(TRPC_PREFIX.length + 1);
    const response = await endpoint({ request, url, procedure, ctx: contextOver(handle) });
    if (!response.headers.has("x-content-type-options")) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        response.headers.set(name, value);
      }
    }
    return response;
  };
}

// Every procedure, with good and bad input, in an order where each call finds what the ones
// before it made.
const TARGET_URL = "https://a.example.com/";
const REF = { project: "p1", probeId: probeIdOf("GET", TARGET_URL) };
const SENT: Sent[] = [
  { path: "projects.create", input: { project: "p1" } },
  { path: "projects.create", input: { project: "p1" } },
  { path: "projects.create", input: { project: "" } },
  { path: "projects.create", raw: "" },
  { path: "projects.create", input: { project: "p2" }, type: "application/json; charset=utf-8" },
  { path: "projects.get", input: { project: "p1" } },
  { path: "projects.get", input: { project: "nope" } },
  { path: "projects.get", input: { project: "p1" }, type: "application/json" },
  { path: "projects.get" },
  { path: "projects.list", input: {} },
  { path: "projects.update", input: { project: "p1", label: "One" } },
  { path: "projects.update", input: { project: "p1", enabled: "false" } },
  { path: "probes.create", input: { project: "p1", url: TARGET_URL, latency: 5 } },
  { path: "probes.createWithProject", input: { project: "p1", url: TARGET_URL, latency: "100" } },
  { path: "probes.createWithProject", input: { project: "p1", url: TARGET_URL, latency: 7 } },
  { path: "probes.list", input: {} },
  { path: "probes.listByProject", input: { project: "p1" } },
  { path: "probes.get", input: REF },
  { path: "probes.update", input: { ...REF, latency: 9 } },
  { path: "results.list", input: REF },
  { path: "results.stats", input: { ...REF, window: "7d" } },
  { path: "results.status", input: { project: "p1" } },
  { path: "results.series", input: { ...REF, window: "90d" } },
  { path: "results.series", input: { ...REF, window: "1y" } },
  { path: "overview.get", input: {} },
  { path: "overview.get", input: { project: "nope" } },
  { path: "whoami.get", input: {} },
  { path: "settings.getIamAlive", input: {} },
  { path: "settings.updateIamAlive", input: { interval_hours: 99 } },
  { path: "settings.listIamAliveDeliveries", input: {} },
  { path: "settings.testIamAlive", input: { x: 1 } },
  { path: "alerts.get", input: {} },
  { path: "alerts.update", input: { failure_threshold: 4 } },
  { path: "alerts.update", input: { targets: ["ghost"] } },
  { path: "alerts.getProject", input: { project: "p1" } },
  { path: "alerts.updateProject", input: { project: "p1", reminder_minutes: 30 } },
  {
    path: "maintenance.create",
    input: { project: "p1", starts_at: "2031-01-01T00:00:00Z", ends_at: "2031-01-02T00:00:00Z" },
  },
  { path: "maintenance.list", input: { project: "p1" } },
  { path: "maintenance.delete", input: { project: "p1", id: "1" } },
  { path: "maintenance.delete", input: { project: "p1", id: "1" } },
  { path: "targets.create", input: { name: "t1", kind: "mail", recipients: ["a@example.com"] } },
  { path: "targets.create", input: { name: "log", kind: "slack", url: "https://x.example/" } },
  { path: "targets.list", input: {} },
  { path: "targets.get", input: { name: "t1" } },
  { path: "targets.update", input: { name: "t1", recipients: ["b@example.com"] } },
  { path: "targets.test", input: { name: "nope" } },
  { path: "targets.delete", input: { name: "t1" } },
  { path: "targets.kinds", input: {} },
  // Never a heartbeat made: its ping URL's token is random, so the two answers would differ.
  { path: "heartbeats.create", input: { project: "nope", name: "h1", period_seconds: 60 } },
  { path: "heartbeats.create", input: { project: "p1", name: "h1", period_seconds: 1 } },
  { path: "heartbeats.list", input: { project: "p1" } },
  { path: "heartbeats.get", input: { project: "p1", name: "nope" } },
  { path: "heartbeats.update", input: { project: "p1", name: "nope", grace_seconds: 30 } },
  { path: "heartbeats.pings", input: { project: "p1", name: "nope" } },
  { path: "heartbeats.delete", input: { project: "p1", name: "nope" } },
  { path: "incidents.list", input: {} },
  { path: "incidents.list", input: { state: "closed" } },
  { path: "incidents.get", input: { id: "1" } },
  { path: "incidents.acknowledge", input: { id: "1" } },
  { path: "incidents.acknowledge", input: { id: "1", x: 1 } },
  { path: "probes.run", input: { project: "p1", probeId: "nope" } },
  { path: "probes.run", input: { ...REF, x: 1 } },
  { path: "statusPages.get", input: { project: "p1" } },
  { path: "statusPages.update", input: { project: "p1", public: true, title: "P1" } },
  { path: "statusPages.update", input: { project: "p1" } },
  { path: "badges.list", input: { project: "p1" } },
  // Never a badge made: its token is random, so the two answers would differ.
  { path: "badges.create", input: { project: "nope" } },
  { path: "badges.create", input: { project: "p1", probe_id: "nope" } },
  { path: "badges.rotate", input: { project: "p1", id: "1" } },
  { path: "badges.delete", input: { project: "p1", id: "1" } },
  // Never a location made: its token is random, so the two answers would differ.
  { path: "locations.list", input: {} },
  { path: "locations.create", input: { name: "" } },
  { path: "locations.get", input: { location: "local" } },
  { path: "locations.get", input: { location: "nope" } },
  { path: "locations.update", input: { location: "local", label: "Here" } },
  { path: "locations.rotateToken", input: { location: "nope" } },
  { path: "locations.delete", input: { location: "nope" } },
  // An API key is not a location token: both refused (403).
  { path: "runner.claim", input: {} },
  { path: "runner.results", input: { results: [] } },
  // Only the service's handler writes audit entries: an actor of none answers alike.
  { path: "auditLog.list", input: { actor: "nobody", limit: 5 } },
  { path: "auditLog.list", input: { since: "yesterday" } },
  // Keys: the list (the environment's, as both handlers are told), refusals and unknown names;
  // a key made answers a new random key each time, so none is made here.
  { path: "apiKeys.list", input: {} },
  { path: "apiKeys.create", input: { name: "", role: "viewer" } },
  { path: "apiKeys.create", input: { name: "k", role: "viewer", projects: ["nope"] } },
  { path: "apiKeys.get", input: { name: "nope" } },
  { path: "apiKeys.get", input: { name: "SERVICE_API_KEY" } },
  { path: "apiKeys.update", input: { name: "nope", role: "editor" } },
  { path: "apiKeys.update", input: { name: "SERVICE_API_KEY", role: "editor" } },
  { path: "apiKeys.rotate", input: { name: "nope" } },
  { path: "apiKeys.delete", input: { name: "nope" } },
  // Sessions: none is made here (each would be a new random id); unknown ids and bad ones.
  { path: "sessions.list", input: {} },
  { path: "sessions.list", input: { name: "key SERVICE_API_KEY" } },
  { path: "sessions.delete", input: { id: "nope" } },
  { path: "sessions.delete", input: { id: "not an id" } },
  { path: "probes.delete", input: REF },
  { path: "probes.delete", input: REF },
  { path: "projects.delete", input: { project: "p1" } },
];

// The same calls, in lockstep, through the service's handler (which takes the fast path) on one
// database and through tRPC's own fetch handler on another: every procedure of the router is
// called, each call must take the fast path, and the answers must be the same, byte for byte.
Deno.test("every query and mutation takes the fast path and answers as tRPC's handler does", async () => {
  const taken: string[] = [];
  const mine = await freshDatabase("pglite");
  const trpc = trpcOver(mine, { taken });
  const other = await freshDatabase("pglite");
  try {
    for (const s of SENT) {
      const before = taken.length;
      const fast = await trpc(requestOf(s, true));
      assert.equal(taken.length, before + 1, `${s.path} ${s.raw ?? ""} took the fast path`);
      const general = await fetchRequestHandler({
        endpoint: "/trpc",
        req: requestOf(s, false),
        router: appRouter,
        createContext: () => contextOver(other),
      });
      const what = `${s.path} ${JSON.stringify(s.input ?? s.raw)}`;
      const fastAnswer = await answer(fast);
      assert.deepEqual(fastAnswer, await answer(general), what);
      // A query changes nothing: the same call is sent again in the same database, asking for
      // JSON by `trpc-accept` (the fast path's too) and as a batch of one (tRPC's handler's).
      if (PROCEDURES.get(s.path) === "query") {
        const accept = requestOf(s, true);
        accept.headers.set("trpc-accept", "application/json");
        assert.deepEqual(await answer(await trpc(accept)), fastAnswer, `${what} accept`);
        assert.equal(taken.length, before + 2, `${what} trpc-accept took the fast path`);
        const batch = await answer(await trpc(batchOf(s)));
        assert.equal(batch.status, fastAnswer.status, `${what} batch`);
        assert.equal(batch.body, `[${fastAnswer.body}]`, `${what} batch`);
        assert.equal(taken.length, before + 2, `${what}: the batch did not take the fast path`);
      }
    }
    assert.deepEqual(new Set(taken), new Set(PROCEDURES.keys()), "every procedure was called");
  } finally {
    await mine.close();
    await other.close();
  }
});

Deno.test("batches, wrong methods and other media types go to tRPC's handler", async () => {
  const taken: string[] = [];
  const handle = await freshDatabase("pglite");
  const trpc = trpcOver(handle, { taken });
  try {
    const declined: [string, RequestInit][] = [
      ["projects.get,projects.list?batch=1&input=%7B%7D", {}],
      [`projects.get?batch=1&input=${encodeURIComponent('{"0":{"project":"a"}}')}`, {}],
      ["projects.get", {
        method: "POST",
        body: "{}",
        headers: { "content-type": "application/json" },
      }],
      [`projects.create?input=${encodeURIComponent('{"project":"a"}')}`, {}],
      ["projects.create", {
        method: "POST",
        body: "{}",
        headers: { "content-type": "text/plain" },
      }],
      ["no.such", {}],
      [`projects.get?input=${encodeURIComponent('{"project":"a"}')}`, {
        headers: { "trpc-accept": "application/jsonl" },
      }],
      ["constructor", {}],
      [`projects.get?input=${encodeURIComponent('{"project":"a"}')}`, {
        headers: { "content-type": "text/plain" },
      }],
    ];
    for (const [path, init] of declined) {
      const headers = new Headers(init.headers);
      headers.set("x-service-api-key", TEST_API_KEY);
      const response = await trpc(new Request(`${BASE}/${path}`, { ...init, headers }));
      await response.body?.cancel();
      assert.deepEqual(taken, [], path);
    }
  } finally {
    await handle.close();
  }
});

/** `s` as tRPC's other forms of one call: asking for JSON by `trpc-accept`, as text, as JSONL. */
function variantsOf(s: Sent): [string, Request][] {
  const withHeader = (name: string, value: string) => {
    const request = requestOf(s, true);
    request.headers.set(name, value);
    return request;
  };
  return [
    ["plain", requestOf(s, true)],
    ["trpc-accept json", withHeader("trpc-accept", "application/json")],
    ["text/plain", withHeader("content-type", "text/plain")],
    ["trpc-accept jsonl", withHeader("trpc-accept", "application/jsonl")],
    ["batch of one", batchOf(s)],
  ];
}

// The service's `/trpc` with its fast path and without it (tRPC's handler answering all but
// streamed lists), on databases of their own, in lockstep: every procedure in every form of a
// call, and lists past 1,000 items, must answer the same status, headers and bytes.
Deno.test("/trpc answers every call the same with its fast path off", async () => {
  const taken: string[] = [];
  const databases = [await freshDatabase("pglite"), await freshDatabase("pglite")];
  const fast = trpcOver(databases[0], { taken });
  const general = trpcOver(databases[1], { procedures: false });
  const headersOf = (response: Response) => {
    const headers = Object.fromEntries(response.headers);
    delete headers["x-request-id"]; // differs by construction
    return headers;
  };
  try {
    const long = Array.from(
      { length: 1001 },
      (_, i) => ({ name: `l-${String(i).padStart(4, "0")}` }),
    );
    for (const handle of databases) {
      await handle.db.insertInto("projects").values(long).execute();
    }
    const sent: Sent[] = [
      ...SENT,
      { path: "projects.list", input: {} },
      { path: "projects.list" },
      { path: "projects.list", input: { limit: 2 } },
      { path: "projects.list", input: { after: "nope" } },
      { path: "probes.list", input: {} },
    ];
    for (const s of sent) {
      const requests = [variantsOf(s), variantsOf(s)];
      for (let v = 0; v < requests[0].length; v++) {
        const [form, request] = requests[0][v];
        const what = `${s.path} ${JSON.stringify(s.input ?? s.raw)} ${form}`;
        const one = await fast(request);
        const other = await general(requests[1][v][1]);
        assert.deepEqual(headersOf(one), headersOf(other), what);
        assert.deepEqual(await answer(one), await answer(other), what);
      }
    }
    assert.ok(taken.length > SENT.length, "the fast path answered calls");
  } finally {
    for (const handle of databases) await handle.close();
  }
});

// A list past the most one page holds (1,000), asked for without `limit`, in one call: walked
// page by page and streamed whole, as on REST; in a batch, refused (422 naming `limit`).
Deno.test("a list past 1,000 items: streamed whole in one call, refused in a batch", async () => {
  const app = await startTestApp("pglite");
  try {
    const names = Array.from(
      { length: 1001 },
      (_, i) => ({ name: `p-${String(i).padStart(4, "0")}` }),
    );
    await app.database.db.insertInto("projects").values(names).execute();
    const request = (path: string) =>
      new Request(`${BASE}/${path}`, { headers: { "x-service-api-key": TEST_API_KEY } });
    for (
      const path of [`projects.list?input=${encodeURIComponent("{}")}`, "projects.list"]
    ) {
      const whole = await app.handler(request(path));
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get("transfer-encoding"), "chunked");
      const body = await whole.json();
      assert.equal(body.result.data.data.length, 1001);
      assert.deepEqual(body.result.data.meta, { count: 1001, next_after: null });
    }
    const batch = await app.handler(
      request(`projects.list?batch=1&input=${encodeURIComponent('{"0":{}}')}`),
    );
    const refused = await batch.json();
    assert.equal(batch.status, 422, JSON.stringify(refused));
    assert.equal(refused[0].error.data.error.code, "validation_failed");
  } finally {
    await app.close();
  }
});
