import assert from "node:assert/strict";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { probeIdOf } from "../domain/probe_id.ts";
import { buildOpenApiDocument } from "../http/openapi.ts";
import { REST_PREFIX } from "../http/handler.ts";
import { freshDatabase, startTestApp, TEST_API_KEY } from "../testing/app.ts";
import type { Db } from "../db/database.ts";
import { createRunNow } from "../runner/run_now.ts";
import { createContext } from "./context.ts";
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

// The same calls, in lockstep, through the service's handler (which takes the fast path) on one
// database and through tRPC's own fetch handler on another: every procedure of the router is
// called, each call must take the fast path, and the answers must be the same, byte for byte.
Deno.test("every query and mutation takes the fast path and answers as tRPC's handler does", async () => {
  const taken: string[] = [];
  const app = await startTestApp("pglite", { onFastPath: (p) => taken.push(p) });
  const other = await freshDatabase("pglite");
  const url = "https://a.example.com/";
  const id = probeIdOf("GET", url);
  const ref = { project: "p1", probeId: id };
  const sent: Sent[] = [
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
    { path: "probes.create", input: { project: "p1", url, latency: 5 } },
    { path: "probes.createWithProject", input: { project: "p1", url, latency: "100" } },
    { path: "probes.createWithProject", input: { project: "p1", url, latency: 7 } },
    { path: "probes.list", input: {} },
    { path: "probes.listByProject", input: { project: "p1" } },
    { path: "probes.get", input: ref },
    { path: "probes.update", input: { ...ref, latency: 9 } },
    { path: "results.list", input: ref },
    { path: "results.stats", input: { ...ref, window: "7d" } },
    { path: "results.status", input: { project: "p1" } },
    { path: "results.series", input: { ...ref, window: "90d" } },
    { path: "results.series", input: { ...ref, window: "1y" } },
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
    { path: "incidents.list", input: {} },
    { path: "incidents.list", input: { state: "closed" } },
    { path: "incidents.get", input: { id: "1" } },
    { path: "incidents.acknowledge", input: { id: "1" } },
    { path: "incidents.acknowledge", input: { id: "1", x: 1 } },
    { path: "probes.run", input: { project: "p1", probeId: "nope" } },
    { path: "probes.run", input: { ...ref, x: 1 } },
    { path: "statusPages.get", input: { project: "p1" } },
    { path: "statusPages.update", input: { project: "p1", public: true, title: "P1" } },
    { path: "statusPages.update", input: { project: "p1" } },
    { path: "badges.list", input: { project: "p1" } },
    // Never a badge made: its token is random, so the two answers would differ.
    { path: "badges.create", input: { project: "nope" } },
    { path: "badges.create", input: { project: "p1", probe_id: "nope" } },
    { path: "badges.rotate", input: { project: "p1", id: "1" } },
    { path: "badges.delete", input: { project: "p1", id: "1" } },
    { path: "probes.delete", input: ref },
    { path: "probes.delete", input: ref },
    { path: "projects.delete", input: { project: "p1" } },
  ];
  try {
    for (const s of sent) {
      const before = taken.length;
      const fast = await app.handler(requestOf(s, true));
      assert.equal(taken.length, before + 1, `${s.path} ${s.raw ?? ""} took the fast path`);
      const general = await fetchRequestHandler({
        endpoint: "/trpc",
        req: requestOf(s, false),
        router: appRouter,
        createContext: () =>
          createContext({
            db: other.db,
            authenticated: true,
            services: { runNow: unrun(other.db) },
          }),
      });
      const what = `${s.path} ${JSON.stringify(s.input ?? s.raw)}`;
      const fastAnswer = await answer(fast);
      assert.deepEqual(fastAnswer, { ...await answer(general), vary: "trpc-accept" }, what);
      // A query changes nothing: the same call is sent again through the service's other
      // path, tRPC's handler (taken with `trpc-accept`, or as a batch of one), in the same
      // database, and must answer the same bytes.
      if (PROCEDURES.get(s.path) === "query") {
        const before = taken.length;
        const accept = requestOf(s, true);
        accept.headers.set("trpc-accept", "application/json");
        const viaAccept = await answer(await app.handler(accept));
        // One known difference, in a header: tRPC's handler varies on `accept` too.
        assert.equal(viaAccept.vary, "trpc-accept, accept", `${what} trpc-accept`);
        assert.deepEqual({ ...viaAccept, vary: "trpc-accept" }, fastAnswer, `${what} trpc-accept`);
        const batch = await answer(await app.handler(batchOf(s)));
        assert.equal(batch.status, fastAnswer.status, `${what} batch`);
        assert.equal(batch.body, `[${fastAnswer.body}]`, `${what} batch`);
        assert.equal(taken.length, before, `${what}: neither took the fast path`);
      }
    }
    assert.deepEqual(new Set(taken), new Set(PROCEDURES.keys()), "every procedure was called");
  } finally {
    await app.close();
    await other.close();
  }
});

Deno.test("batches, wrong methods and other media types go to tRPC's handler", async () => {
  let taken = 0;
  const app = await startTestApp("pglite", { onFastPath: () => taken++ });
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
      ["constructor", {}],
      [`projects.get?input=${encodeURIComponent('{"project":"a"}')}`, {
        headers: { "content-type": "text/plain" },
      }],
    ];
    for (const [path, init] of declined) {
      const headers = new Headers(init.headers);
      headers.set("x-service-api-key", TEST_API_KEY);
      const response = await app.handler(new Request(`${BASE}/${path}`, { ...init, headers }));
      await response.body?.cancel();
      assert.equal(taken, 0, path);
    }
  } finally {
    await app.close();
  }
});

// A list past the most one page holds (1,000), asked for without `limit`: the fast path (and
// REST) walk its pages and stream it whole; tRPC's handler calls the procedure once, which
// refuses an unpaged list that long. The one difference in answers left between the two paths
// (issue 20): pinned here so that closing it is a decision.
Deno.test("a list past 1,000 items: streamed whole by the fast path, refused by tRPC's handler", async () => {
  const app = await startTestApp("pglite");
  try {
    const names = Array.from(
      { length: 1001 },
      (_, i) => ({ name: `p-${String(i).padStart(4, "0")}` }),
    );
    await app.database.db.insertInto("projects").values(names).execute();
    const request = (headers: Record<string, string> = {}) =>
      new Request(`${BASE}/projects.list?input=${encodeURIComponent("{}")}`, {
        headers: { "x-service-api-key": TEST_API_KEY, ...headers },
      });
    const fast = await app.handler(request());
    assert.equal(fast.status, 200);
    const body = await fast.json();
    assert.equal(body.result.data.data.length, 1001);
    assert.deepEqual(body.result.data.meta, { count: 1001, next_after: null });
    const general = await app.handler(request({ "trpc-accept": "application/json" }));
    const refused = await general.json();
    assert.equal(general.status, 422, JSON.stringify(refused));
    assert.equal(refused.error.data.error.code, "validation_failed");
  } finally {
    await app.close();
  }
});
