/**
 * Property-based tests: arbitrary JSON bodies, strings, numbers, path segments and query
 * values against every REST endpoint and every tRPC procedure. No answer may be a 5xx, and an
 * answer in the 4xx range must leave every stored table exactly as it was (read back after
 * each request).
 *
 * Environment: FUZZ_RUNS (runs per endpoint; 15 — more for a deeper search), FUZZ_SEED (to replay a failure).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { sql } from "kysely";
import type { App } from "../server/app.ts";
import type { Db } from "../server/storage/database.ts";
import { REST_PREFIX, TRPC_PREFIX } from "../server/edge/handler.ts";
import { buildOpenApiDocument } from "../server/edge/openapi.ts";
import { type Answer, backends, startTestApp, TestClient } from "../server/testing/app.ts";
import { procedureTypes } from "../server/testing/document.ts";
import { appRouter } from "../server/procedures/router.ts";

const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 15);
const SEED = Deno.env.get("FUZZ_SEED") ? Number(Deno.env.get("FUZZ_SEED")) : undefined;

const SEED_PROJECT = "fz-alpha";
const SEED_URLS = ["https://a.example.com/health", "https://b.example.com/"];

/** Everything the service stores, table by table, in a stable order. */
async function storedState(db: Db): Promise<Record<string, unknown>> {
  // From the catalog, not information_schema: its views cost most of a read on PGlite.
  const { rows: tables } = await sql<{ name: string }>`
    select relname as name from pg_class
    where relnamespace = 'public'::regnamespace and relkind in ('r', 'p')
      and relname not like 'kysely_%' order by relname`.execute(db);
  // All tables in one statement: a statement each (some forty, with the daily partitions) after
  // every fuzzed request was most of this test's time.
  const { rows } = await sql<{ name: string; rows: unknown }>`${
    sql.join(
      tables.map(({ name }) =>
        sql`select ${name}::text as name,
          (select coalesce(json_agg(t order by t::text), '[]'::json) from ${sql.table(name)} t)
            as rows`
      ),
      sql` union all `,
    )
  }`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.name, r.rows]));
}

/**
 * The next transaction id the database will hand out. Every change to a table's rows is made by a
 * transaction that was given an id, so while this mark stays the same no table can have changed
 * and reading them all back (most of the time a request took) can be skipped. Ids are shared by
 * the whole PostgreSQL cluster, so other databases' writes move it too: then the tables are read.
 */
async function writeMark(db: Db): Promise<string> {
  const { rows } = await sql<{ mark: string }>`
    select pg_snapshot_xmax(pg_current_snapshot())::text as mark`.execute(db);
  return rows[0].mark;
}

interface Seed {
  project: string;
  probeIds: string[];
}

/** Makes sure the seeded project and its probes exist (a fuzzed 2xx delete may remove them). */
async function ensureSeed(api: TestClient): Promise<Seed> {
  if ((await api.get(`${REST_PREFIX}/projects/${SEED_PROJECT}`)).status === 404) {
    await api.post(`${REST_PREFIX}/projects`, { project: SEED_PROJECT, label: "seed" });
  }
  const probeIds = [];
  for (const url of SEED_URLS) {
    const res = await api.post(`${REST_PREFIX}/projects/${SEED_PROJECT}/probes`, {
      url,
      headers: { accept: "text/plain" },
      body: { ping: [1, 2] },
      latency: 250,
    });
    probeIds.push(res.body.data.probe_id as string);
  }
  return { project: SEED_PROJECT, probeIds };
}

// --- Arbitraries -------------------------------------------------------------------------

const weirdStrings = fc.constantFrom(
  "",
  " ",
  ".",
  "..",
  "%",
  "%00",
  "\0",
  "a\0b",
  "\u202e",
  "😀",
  "\ud800",
  "null",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "x".repeat(5000),
  "https://a.example.com/health",
  "HTTP://A.EXAMPLE.COM:80/health#frag",
  "javascript:alert(1)",
  "GET",
  "enabled",
  "mail",
  "' or 1=1 --",
);

const numbers = fc.oneof(
  fc.integer(),
  fc.integer({ min: -2, max: 30 }),
  fc.double(),
  fc.constantFrom(0, -0, 1e308, -1e308, 2 ** 53, 0.5, 24, 25, 600_000, 600_001),
);

const strings = fc.oneof(
  { weight: 3, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: "binary" }) },
  { weight: 2, arbitrary: weirdStrings },
);

/** Any JSON value, leaning towards the kinds of values the schemas expect. */
const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    strings,
    numbers,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(strings, tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** Objects with the fields the service knows, filled with anything, plus stray keys. */
const fieldBag = fc.record({
  project: fc.oneof(fc.constant(SEED_PROJECT), jsonValue),
  url: fc.oneof(fc.constantFrom(...SEED_URLS), jsonValue),
  method: fc.oneof(fc.constantFrom("GET", "post", "TRACE"), jsonValue),
  headers: fc.oneof(fc.dictionary(strings, strings, { maxKeys: 3 }), jsonValue),
  body: jsonValue,
  latency: fc.oneof(numbers, jsonValue),
  label: fc.oneof(strings, jsonValue),
  description: fc.oneof(strings, jsonValue),
  status: fc.oneof(fc.constantFrom("enabled", "disabled"), jsonValue),
  enabled: fc.oneof(fc.boolean(), jsonValue),
  interval_hours: fc.oneof(numbers, jsonValue),
  channels: fc.oneof(fc.subarray(["mail", "log", "webhook", "sms"]), jsonValue),
  probeId: jsonValue,
  limit: fc.oneof(numbers, jsonValue),
}, { requiredKeys: [] }).chain((known) =>
  fc.dictionary(strings, jsonValue, { maxKeys: 2 }).map((stray) => ({ ...stray, ...known }))
);

/** A request body: JSON of any shape, a field bag, or bytes that are not JSON at all. */
const body = fc.oneof(
  { weight: 4, arbitrary: fieldBag.map((v) => ({ json: v as unknown })) },
  { weight: 2, arbitrary: jsonValue.map((v) => ({ json: v })) },
  { weight: 1, arbitrary: fc.string().map((raw) => ({ raw, type: "application/json" })) },
  { weight: 1, arbitrary: fc.string().map((raw) => ({ raw, type: "text/plain" })) },
  { weight: 1, arbitrary: fc.constant({ none: true }) },
);
type Body = { json: unknown } | { raw: string; type: string } | { none: true };

/** A path segment: a known name, or anything, sent encoded or as it is. */
function segment(known: () => string[]) {
  return fc.tuple(
    fc.oneof(
      { weight: 2, arbitrary: fc.constant(null) }, // a known name, picked at run time
      { weight: 3, arbitrary: strings },
      { weight: 1, arbitrary: numbers.map(String) },
    ),
    fc.boolean(),
    fc.nat(),
  ).map(([value, encode, pick]) => {
    const choices = known();
    const text = value ?? choices[pick % choices.length];
    if (!encode) return text;
    try {
      return encodeURIComponent(text);
    } catch {
      return text; // a lone surrogate has no encoding
    }
  });
}

const query = fc.option(
  fc.dictionary(
    fc.constantFrom("project", "limit", "input", "batch", "x"),
    fc.oneof(strings, numbers.map(String)),
    { maxKeys: 3 },
  ),
  { nil: undefined },
);

function withQuery(path: string, params: Record<string, string> | undefined): string {
  if (!params || Object.keys(params).length === 0) return path;
  return `${path}?${new URLSearchParams(params)}`;
}

// --- The property -----------------------------------------------------------------------

interface Harness {
  app: App;
  api: TestClient;
  seed: Seed;
  state: Record<string, unknown>;
  /** `writeMark` when `state` was read. */
  mark: string;
  /** Set after a 2xx that wrote: the seed may need writing again and the state reading again. */
  dirty: boolean;
}

async function send(api: TestClient, method: string, path: string, b: Body): Promise<Answer> {
  if ("json" in b) return await api.call(method, path, { body: b.json });
  if ("raw" in b) {
    return await api.call(method, path, { raw: b.raw, headers: { "content-type": b.type } });
  }
  return await api.call(method, path);
}

/** Sends one request and checks the answer against the two promises. */
async function check(h: Harness, method: string, path: string, b: Body): Promise<void> {
  if (!URL.canParse(`http://service.test${path}`)) return; // no client could send it
  const res = await send(h.api, method, path, b);
  const what = `${method} ${path} -> ${res.status} ${res.text.slice(0, 300)}`;
  assert.ok(res.status < 500, what);
  const mark = await writeMark(h.app.database.db);
  if (mark === h.mark) return; // nothing written: every table is as it was
  const after = await storedState(h.app.database.db);
  if (res.status >= 400) assert.deepEqual(after, h.state, `a 4xx changed stored state: ${what}`);
  else h.dirty = true;
  h.state = after;
  h.mark = mark;
}

const DOCUMENT = buildOpenApiDocument(appRouter, REST_PREFIX);

/** The REST operations, from the generated OpenAPI document. */
function restOperations(): { method: string; path: string }[] {
  return Object.entries(DOCUMENT.paths ?? {}).flatMap(([path, item]) =>
    Object.keys(item as object).map((method) => ({ method: method.toUpperCase(), path }))
  );
}

/** The tRPC procedures, from the same document (a GET operation is a query). */
function trpcProcedures(): { path: string; type: "query" | "mutation" }[] {
  return [...procedureTypes(DOCUMENT)].map(([path, type]) => ({ path, type }));
}

for (const backend of backends()) {
  Deno.test(`fuzzing every endpoint finds no 5xx and no 4xx that changes state [${backend}]`, async (t) => {
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    const h: Harness = {
      app,
      api,
      seed: { project: SEED_PROJECT, probeIds: [] },
      state: {},
      mark: "",
      dirty: true,
    };
    const projects = () => [h.seed.project, "no-such-project"];
    const probes = () => [...h.seed.probeIds, "0000000000000000"];
    const before = async () => {
      if (!h.dirty) return;
      h.seed = await ensureSeed(api);
      // The mark first: a write landing between the two reads then shows at the next check.
      h.mark = await writeMark(app.database.db);
      h.state = await storedState(app.database.db);
      h.dirty = false;
    };
    const params = { numRuns: RUNS, seed: SEED, endOnFailure: true };
    try {
      // The checks skip reading the tables back while the write mark stands still: make sure
      // writes do move it here (the seed is a project and two probes).
      const start = await writeMark(app.database.db);
      await before();
      assert.notEqual(h.mark, start, "writing the seed moved the write mark");
      for (const op of restOperations()) {
        await t.step(`REST ${op.method} ${op.path}`, async () => {
          await fc.assert(
            fc.asyncProperty(
              segment(projects),
              segment(probes),
              query,
              body,
              async (project, probeId, q, b) => {
                await before();
                const path = op.path.replace("{project}", project).replace("{probeId}", probeId);
                const sent = op.method === "GET" || op.method === "DELETE"
                  ? { none: true } as const
                  : b;
                await check(h, op.method, withQuery(`${REST_PREFIX}${path}`, q), sent);
              },
            ),
            params,
          );
        });
      }
      for (const proc of trpcProcedures()) {
        await t.step(`tRPC ${proc.type} ${proc.path}`, async () => {
          await fc.assert(
            fc.asyncProperty(body, fc.boolean(), async (b, batch) => {
              await before();
              const path = `${TRPC_PREFIX}/${proc.path}`;
              if (proc.type === "query") {
                const input = "json" in b
                  ? JSON.stringify(batch ? { 0: b.json } : b.json)
                  : "raw" in b
                  ? b.raw
                  : undefined;
                const q = input === undefined ? undefined : { input, ...(batch && { batch: "1" }) };
                await check(h, "GET", withQuery(path, q), { none: true });
              } else {
                const sent = batch && "json" in b ? { json: { 0: b.json } } : b;
                await check(h, "POST", batch ? `${path}?batch=1` : path, sent);
              }
            }),
            params,
          );
        });
      }
      await t.step("any method on any path", async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"),
            fc.array(segment(() => ["projects", "probes", "settings", "iam-alive", SEED_PROJECT]), {
              maxLength: 5,
            }),
            fc.constantFrom(REST_PREFIX, TRPC_PREFIX, ""),
            body,
            async (method, segments, prefix, b) => {
              await before();
              const sent = method === "GET" || method === "HEAD" ? { none: true } as const : b;
              await check(h, method, `${prefix}/${segments.join("/")}`, sent);
            },
          ),
          params,
        );
      });
    } finally {
      await app.close();
    }
  });
}
