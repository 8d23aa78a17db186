import assert from "node:assert/strict";
import fc from "fast-check";
import type { DatabaseHandle } from "../db/database.ts";
import { migrateToLatest } from "../db/migrator.ts";
import { createRestHandler, type RestResult } from "./handler.ts";
import { freshDatabase } from "../testing/app.ts";
import { createContext } from "../trpc/context.ts";
import { appRouter } from "../trpc/router.ts";

const ORIGIN = "http://service.test";

interface Sent {
  method: string;
  path: string;
  query: string;
  body?: Record<string, unknown>;
}

const names = fc.constantFrom("p1", "p2", "P1", "nope", "a b", "%41", "");
const segments = fc.tuple(names, fc.constantFrom("", "probes", "probes/abc", "probes/"));
const bodies = fc.option(
  fc.dictionary(
    fc.constantFrom("project", "url", "method", "label", "status", "latency", "enabled", "x"),
    fc.oneof(
      names,
      fc.constantFrom("https://a.example.com/", "GET", "disabled", "enabled"),
      fc.integer({ min: -1, max: 30 }),
      fc.boolean(),
      fc.constant(null),
    ),
  ),
  { nil: undefined },
);
const requests = fc.record({
  method: fc.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT"),
  path: fc.oneof(
    segments.map(([name, rest]) => `/projects/${name}${rest ? `/${rest}` : ""}`),
    fc.constantFrom(
      "/projects",
      "/projects/",
      "/probes",
      "/settings/iam-alive",
      "/settings/iam-alive/deliveries",
      "/nothing",
    ),
  ),
  query: fc.constantFrom("", "?project=p1", "?project=p1&project=p2", "?limit=2", "?limit=x"),
  body: bodies,
});

/** The same requests, in lockstep, direct on one database and through the bridge on another. */
Deno.test("direct dispatch answers exactly as the bridge does", async () => {
  const databases: DatabaseHandle[] = [
    await freshDatabase("pglite"),
    await freshDatabase("pglite"),
  ];
  try {
    for (const d of databases) await migrateToLatest(d.db);
    const direct = createRestHandler(appRouter);
    const bridge = createRestHandler(appRouter, { direct: false });
    const send = (
      handler: typeof direct,
      handle: DatabaseHandle,
      s: Sent,
    ): Promise<RestResult & { status: number }> => {
      const url = new URL(`${ORIGIN}/api/v1${s.path}${s.query}`);
      // As the HTTP layer passes them on: bodies are JSON by then.
      const request = new Request(url, {
        method: s.method,
        headers: { "content-type": "application/json" },
      });
      const ctx = createContext({ db: handle.db, authenticated: true });
      const body = ["POST", "PATCH", "PUT"].includes(s.method) ? s.body ?? {} : undefined;
      return handler({ request, url, path: s.path, body, ctx }).then((r) => ({
        ...r,
        status: r.status,
      }));
    };
    const seed: Sent[] = [
      { method: "POST", path: "/projects", query: "", body: { project: "p1" } },
      {
        method: "POST",
        path: "/projects/p1/probes",
        query: "",
        body: { url: "https://a.example.com/" },
      },
    ];
    for (const s of seed) {
      const [a, b] = await Promise.all([
        send(direct, databases[0], s),
        send(bridge, databases[1], s),
      ]);
      assert.deepEqual([a.status, a.body], [b.status, b.body]);
    }
    await fc.assert(
      fc.asyncProperty(requests, async (s) => {
        const a = await send(direct, databases[0], s);
        const b = await send(bridge, databases[1], s);
        assert.deepEqual([a.status, a.body], [b.status, b.body], `${s.method} ${s.path}${s.query}`);
      }),
      { numRuns: Number(Deno.env.get("FUZZ_RUNS") ?? 300) },
    );
  } finally {
    for (const d of databases) await d.close();
  }
});
