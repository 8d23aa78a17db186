import assert from "node:assert/strict";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { DatabaseHandle } from "../db/database.ts";
import { migrateToLatest } from "../db/migrator.ts";
import { freshDatabase } from "../testing/app.ts";
import { createContext } from "./context.ts";
import { appRouter } from "./router.ts";
import { createTrpcFastPath } from "./fast_path.ts";

const BASE = "http://service.test/trpc";

interface Sent {
  method: string;
  path: string;
  query?: string;
  body?: string;
  type?: string;
}

async function answer(response: Response) {
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    vary: response.headers.get("vary"),
    body: await response.text(),
  };
}

function requestOf(s: Sent): Request {
  return new Request(`${BASE}/${s.path}${s.query ? `?${s.query}` : ""}`, {
    method: s.method,
    headers: s.type ? { "content-type": s.type } : {},
    body: s.body,
  });
}

const input = (value: unknown) => `input=${encodeURIComponent(JSON.stringify(value))}`;

// Two databases in lockstep: one answered by the fast path, one by tRPC's own handler.
Deno.test("the fast path answers exactly as tRPC's fetch handler does", async () => {
  const databases: DatabaseHandle[] = [
    await freshDatabase("pglite"),
    await freshDatabase("pglite"),
  ];
  try {
    for (const d of databases) await migrateToLatest(d.db);
    const [fastDb, slowDb] = databases.map((d) => d.db);
    const fast = createTrpcFastPath(appRouter, { onError: () => {} });
    const sent: Sent[] = [
      {
        method: "POST",
        path: "projects.create",
        body: '{"project":"p1"}',
        type: "application/json",
      },
      {
        method: "POST",
        path: "projects.create",
        body: '{"project":"p1"}',
        type: "application/json",
      },
      { method: "POST", path: "projects.create", body: '{"project":""}', type: "application/json" },
      { method: "POST", path: "projects.create", body: "", type: "application/json" },
      { method: "GET", path: "projects.get", query: input({ project: "p1" }) },
      { method: "GET", path: "projects.get", query: input({ project: "nope" }) },
      {
        method: "GET",
        path: "projects.get",
        query: input({ project: "p1" }),
        type: "application/json",
      },
      { method: "GET", path: "projects.get" },
      { method: "GET", path: "projects.list", query: input({}) },
      {
        method: "POST",
        path: "probes.create",
        body: JSON.stringify({ project: "p1", url: "https://a.example.com/", latency: 5 }),
        type: "application/json; charset=utf-8",
      },
      { method: "GET", path: "probes.listByProject", query: input({ project: "p1" }) },
      { method: "GET", path: "settings.getIamAlive", query: input({}) },
      {
        method: "POST",
        path: "settings.updateIamAlive",
        body: '{"interval_hours":99}',
        type: "application/json",
      },
      {
        method: "POST",
        path: "projects.delete",
        body: '{"project":"p1"}',
        type: "application/json",
      },
    ];
    for (const s of sent) {
      const request = requestOf(s);
      const ctx = createContext({ db: fastDb, authenticated: true });
      const quick = await fast({
        request,
        url: new URL(request.url),
        path: s.path,
        text: s.body ?? null,
        ctx,
      });
      assert.ok(quick, `${s.method} ${s.path} takes the fast path`);
      const general = await fetchRequestHandler({
        endpoint: "/trpc",
        req: requestOf(s),
        router: appRouter,
        createContext: () => createContext({ db: slowDb, authenticated: true }),
      });
      assert.deepEqual(await answer(quick), await answer(general), `${s.method} ${s.path}`);
    }
  } finally {
    for (const d of databases) await d.close();
  }
});

Deno.test("batches, other methods and unusual bodies go the general way", async () => {
  const handle = await freshDatabase("pglite");
  try {
    const fast = createTrpcFastPath(appRouter, { onError: () => {} });
    const ctx = createContext({ db: handle.db, authenticated: true });
    const declined: Sent[] = [
      { method: "GET", path: "projects.get,projects.list", query: `batch=1&${input({})}` },
      { method: "GET", path: "projects.get", query: `batch=1&${input({ 0: { project: "a" } })}` },
      { method: "POST", path: "projects.get", body: "{}", type: "application/json" },
      { method: "GET", path: "projects.create", query: input({ project: "a" }) },
      { method: "POST", path: "projects.create", body: "{", type: "application/json" },
      { method: "POST", path: "projects.create", body: "{}", type: "text/plain" },
      { method: "GET", path: "projects.get", query: "input=%7B" },
      { method: "GET", path: "no.such" },
      { method: "GET", path: "projects.get", query: input({ project: "a" }), type: "text/plain" },
      { method: "GET", path: "constructor" },
    ];
    for (const s of declined) {
      const request = requestOf(s);
      const quick = await fast({
        request,
        url: new URL(request.url),
        path: s.path,
        text: s.body ?? null,
        ctx,
      });
      assert.equal(quick, null, `${s.method} ${s.path} ${s.query ?? ""}`);
    }
  } finally {
    await handle.close();
  }
});
