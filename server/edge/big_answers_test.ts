/**
 * Answers bounded in size, so no request can make the server build an unbounded answer, through the
 * real handler on each database: a tRPC batch of lists, or a single page, that would build more
 * than `MAX_ANSWER_BYTES` is refused with 413 `response_too_large` (never a 500, never built
 * whole), smaller ones are answered as before, and three such batches at once leave other callers
 * answered within a second.
 */
import assert from "node:assert/strict";
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";
import { type App, createApp } from "../app.ts";
import { json } from "../storage/json.ts";
import { probeIdOf } from "../domain/probe_id.ts";
import { createLogger } from "../base/log.ts";
import { openHungDatabase } from "../testing/hung_database.ts";
import {
  backends,
  freshDatabase,
  startTestApp,
  TEST_API_KEY,
  TEST_READ_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";
import { appRouter } from "../procedures/router.ts";
import { createPrincipalCheck } from "../domain/access/api_key.ts";
import { createHttpHandler } from "./handler.ts";
import { readOpenApiJson } from "./openapi_served.ts";

/** The limit of these tests: 1 MiB (the service's default is 16 MiB). */
const LIMIT = 1024 * 1024;
/** Probes of about 5.2 KB each (5 header values of 1,000 characters), as in the issue. */
const PROBES = 250;

/** A project of `PROBES` big probes, written straight to the database (fast). */
async function bigProject(app: App): Promise<string> {
  const project = uniqueName("big");
  const db = app.database.db;
  await db.insertInto("projects").values({ name: project, label: "Big", description: null })
    .execute();
  const headers = Object.fromEntries(
    Array.from({ length: 5 }, (_, i) => [`x-h${i}`, "v".repeat(1000)]),
  );
  await db.insertInto("probes").values(
    Array.from({ length: PROBES }, (_, i) => {
      const url = `https://t-${i}.example.com/`;
      return {
        project,
        probe_id: probeIdOf("GET", url),
        url,
        method: "GET",
        headers: json(headers),
        body: null,
        latency: 500,
      };
    }),
  ).execute();
  return project;
}

/** `GET /trpc/<calls>?batch=1` of `calls` calls of `procedure` with `input`. */
function batchPath(procedure: string, calls: number, input: unknown): string {
  const inputs = Object.fromEntries(Array.from({ length: calls }, (_, i) => [i, input]));
  return `/trpc/${Array(calls).fill(procedure).join(",")}?batch=1&input=${
    encodeURIComponent(JSON.stringify(inputs))
  }`;
}

function assertTooLarge(answer: { status: number; body: unknown; text: string }, trpc: boolean) {
  assert.equal(answer.status, 413, answer.text.slice(0, 300));
  // deno-lint-ignore no-explicit-any
  const body = answer.body as any;
  const error = trpc ? body.error.data.error : body.error;
  assert.equal(error.code, "response_too_large");
  assert.match(error.message, /limit and after/);
  if (trpc) assert.equal(body.error.data.httpStatus, 413);
}

for (const backend of backends()) {
  Deno.test(`answers bounded in size [${backend}]`, async (t) => {
    const app = await startTestApp(backend, { maxAnswerBytes: LIMIT });
    const api = new TestClient(app.handler);
    try {
      const project = await bigProject(app);
      const whole = await api.get(`/api/v1/projects/${project}/probes?limit=1000`);
      // The list is ~1.3 MB: past the limit of these tests, within the default one.
      assertTooLarge(whole, false);

      await t.step("a batch of lists past the limit is 413 as a whole, not a 500", async () => {
        const big = await api.get(batchPath("probes.listByProject", 50, { project }));
        assertTooLarge(big, true);
        const pages = await api.get(
          batchPath("probes.listByProject", 50, { project, limit: 100 }),
        );
        assertTooLarge(pages, true);
      });

      await t.step("a streamed batch answers each call past the limit with the error", async () => {
        const streamed = await api.get(batchPath("probes.listByProject", 10, { project }), {
          headers: { "trpc-accept": "application/jsonl" },
        });
        assert.equal(streamed.status, 200);
        assert.match(streamed.text, /response_too_large/);
        assert.ok(streamed.text.length < 2 * LIMIT, `${streamed.text.length} characters`);
      });

      await t.step("a batch within the limit is answered whole, as before", async () => {
        const small = await api.get(
          batchPath("probes.listByProject", 3, { project, limit: 50 }),
        );
        assert.equal(small.status, 200, small.text.slice(0, 300));
        assert.equal(small.body.length, 3);
        for (const call of small.body) assert.equal(call.result.data.data.length, 50);
        assert.ok(small.text.length < LIMIT);
      });

      await t.step("a batch's mutations are never refused for their answers", async () => {
        const name = uniqueName("m");
        const path = `/trpc/projects.create,projects.create?batch=1`;
        const made = await api.post(path, {
          0: { project: name },
          1: { project: `${name}-2` },
        });
        assert.equal(made.status, 200, made.text);
        assert.equal((await api.get(`/api/v1/projects/${name}-2`)).status, 200);
      });

      await t.step("a single page past the limit is 413 on REST and on /trpc", async () => {
        assertTooLarge(await api.get(`/api/v1/projects/${project}/probes?limit=1000`), false);
        const input = encodeURIComponent(JSON.stringify({ project, limit: 1000 }));
        assertTooLarge(await api.get(`/trpc/probes.listByProject?input=${input}`), true);
        // Within it, and the whole list streamed, are answered as before.
        const page = await api.get(`/api/v1/projects/${project}/probes?limit=100`);
        assert.equal(page.status, 200);
        assert.equal(page.body.data.length, 100);
        const streamed = await api.get(`/api/v1/projects/${project}/probes`);
        assert.equal(streamed.status, 200);
        assert.equal(streamed.body.meta.count, PROBES);
      });

      await t.step("three big batches at once leave others answered within 1 s", async () => {
        const path = batchPath("probes.listByProject", 50, { project, limit: 100 });
        const batches = Promise.all([api.get(path), api.get(path), api.get(path)]);
        let done = false;
        batches.finally(() => done = true);
        const slowest: number[] = [];
        do {
          for (const other of ["/healthz", `/api/v1/projects/${project}`]) {
            const started = performance.now();
            const answer = await api.get(other);
            slowest.push(performance.now() - started);
            assert.equal(answer.status, 200, `${other}: ${answer.text}`);
          }
        } while (!done);
        const max = Math.max(...slowest);
        assert.ok(max < 1000, `another caller waited ${max.toFixed(0)} ms`);
        for (const answer of await batches) assertTooLarge(answer, true);
      });
    } finally {
      await app.close();
    }
  });
}

/**
 * Counts the characters of the rows the database gives back (their JSON), across queries, and
 * the most one query gave.
 */
class RowsRead implements KyselyPlugin {
  chars = 0;
  largest = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    let chars = 0;
    for (const row of args.result.rows) chars += JSON.stringify(row).length;
    this.chars += chars;
    this.largest = Math.max(this.largest, chars);
    return Promise.resolve(args.result);
  }
}

/** The characters of the database's rows that `request` made the service read. */
async function charsRead(counter: RowsRead, request: () => Promise<unknown>): Promise<number> {
  const before = counter.chars;
  await request();
  return counter.chars - before;
}

for (const backend of backends()) {
  Deno.test(`big lists are refused before they are read [${backend}]`, async (t) => {
    // A project past the 1,000 items of a list without `limit`, 50 of its probes ~100 KB each.
    const counter = new RowsRead();
    const handle = await freshDatabase(backend);
    const app = await createApp({
      database: { ...handle, db: handle.db.withPlugin(counter) },
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      config: { readOnlyApiKeys: [TEST_READ_KEY], maxAnswerBytes: LIMIT },
    });
    const api = new TestClient(app.handler);
    try {
      const project = uniqueName("many");
      const db = app.database.db;
      await db.insertInto("projects").values({ name: project, label: null, description: null })
        .execute();
      const big = Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`x-h${i}`, "v".repeat(8000)]),
      );
      for (let start = 0; start < 1001; start += 143) {
        await db.insertInto("probes").values(
          Array.from({ length: 143 }, (_, k) => {
            const url = `https://t-${String(start + k).padStart(4, "0")}.example.com/`;
            return {
              project,
              probe_id: probeIdOf("GET", url),
              url,
              method: "GET",
              headers: json(start + k < 50 ? big : {}),
            };
          }),
        ).execute();
      }

      await t.step("a batch of lists past 1,000 items: 422 each, no probe read", async () => {
        let answer!: Awaited<ReturnType<TestClient["get"]>>;
        const read = await charsRead(counter, async () => {
          answer = await api.get(batchPath("probes.listByProject", 50, { project }));
        });
        assert.equal(answer.status, 422, answer.text.slice(0, 300));
        for (const call of answer.body) {
          assert.equal(call.error.data.error.details[0].path, "limit");
        }
        // A count, 50 times. Reading the probes was ~250 MB; their keys alone, ~6 MB.
        assert.ok(read < 100_000, `${read} characters read`);
      });

      const pages = (key: string) => [
        () => api.get(batchPath("probes.listByProject", 50, { project, limit: 1000 }), { key }),
        () => api.get(`/api/v1/projects/${project}/probes?limit=1000`, { key }),
        () =>
          api.get(
            `/trpc/probes.listByProject?input=${
              encodeURIComponent(JSON.stringify({ project, limit: 1000 }))
            }`,
            { key },
          ),
      ];

      await t.step("a page whose stored probes pass the limit: 413, no probe read", async () => {
        for (const page of pages(TEST_API_KEY)) {
          let answer!: Awaited<ReturnType<TestClient["get"]>>;
          const read = await charsRead(counter, async () => answer = await page());
          assert.equal(answer.status, 413, answer.text.slice(0, 300));
          // One row: the page's weight. The page itself holds ~5 MB, its keys ~100 KB.
          assert.ok(read < 10_000, `${read} characters read`);
        }
      });

      await t.step("a read-only key's page stops reading near the limit: 413", async () => {
        // Its URLs and headers are masked, shorter than stored: counted as they are read.
        for (const page of pages(TEST_READ_KEY)) {
          let answer!: Awaited<ReturnType<TestClient["get"]>>;
          const read = await charsRead(counter, async () => answer = await page());
          assert.equal(answer.status, 413, answer.text.slice(0, 300));
          // The limit (1 MiB) and the part read past it (1 MiB); the page holds ~5 MB.
          assert.ok(read < 2.5 * LIMIT, `${read} characters read`);
        }
      });

      await t.step("a whole list streamed reads big probes a few at a time", async () => {
        counter.largest = 0;
        const whole = await api.get(`/api/v1/projects/${project}/probes`);
        assert.equal(whole.status, 200);
        assert.equal(whole.body.meta.count, 1001);
        assert.equal(whole.body.data[49].headers["x-h11"], "v".repeat(8000));
        assert.equal(whole.body.data[50].url, "https://t-0050.example.com/");
        // A page of 500 would read the 50 big probes at once: ~5 MB.
        assert.ok(counter.largest < 2.5 * LIMIT, `${counter.largest} characters in one query`);
      });

      await t.step("what fits is answered whole, as before", async () => {
        // The big probes ten at a time (~1 MB a page), then pages of the small ones in a batch.
        let after: string | undefined;
        for (let i = 0; i < 5; i++) {
          const page = await api.get(
            `/api/v1/projects/${project}/probes?limit=10${after ? `&after=${after}` : ""}`,
          );
          assert.equal(page.status, 200, page.text.slice(0, 300));
          assert.equal(page.body.data.length, 10);
          assert.equal(page.body.data[9].headers["x-h11"], "v".repeat(8000));
          after = page.body.meta.next_after;
        }
        const small = await api.get(
          batchPath("probes.listByProject", 2, { project, limit: 951, after }),
        );
        assert.equal(small.status, 200, small.text.slice(0, 300));
        for (const call of small.body) assert.equal(call.result.data.meta.count, 951);
      });
    } finally {
      await app.close();
    }
  });
}

Deno.test("a batch while the database hangs answers 503 within one deadline, not one per call", async () => {
  // A listener that takes connections and says nothing, as a hung database server would. Batch
  // calls run one at a time: without failing the rest at once, 50 calls would wait 50 deadlines.
  const hung = await openHungDatabase(500);
  const database = hung.database;
  try {
    const api = new TestClient(createHttpHandler({
      router: appRouter,
      openApiJson: readOpenApiJson(),
      db: database.db,
      checkKey: createPrincipalCheck([TEST_API_KEY], []),
      log: createLogger("silent"),
    }));
    const started = performance.now();
    const answer = await api.get(batchPath("projects.get", 50, { project: "p" }));
    const ms = performance.now() - started;
    assert.equal(answer.status, 503, answer.text.slice(0, 300));
    assert.equal(answer.body.length, 50);
    for (const call of answer.body) assert.equal(call.error.data.error.code, "service_unavailable");
    assert.ok(ms < 5000, `answered after ${Math.round(ms)} ms`);
  } finally {
    await hung.close();
  }
});
