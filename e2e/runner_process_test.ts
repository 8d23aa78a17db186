/**
 * Runner processes on one PostgreSQL: sharing the work, exactly-once runs, recovery after
 * SIGKILL; and the `deno task runner` entry itself. These spawn processes, so they run on
 * PostgreSQL only (the embedded database has one runner, inside the server).
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type Db, openDatabase } from "../server/storage/database.ts";
import { migrateToLatest } from "../server/storage/migrator.ts";
import { createPostgresDatabase, uniqueName } from "../server/testing/app.ts";
import { RUNNER_ENTRY, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { startTarget, type Target } from "../server/testing/target_server.ts";

const FIXTURE = new URL("./testdata/runner_process.ts", import.meta.url).pathname;
const INTERVAL = 2_000;
const LEASE = 3_000;
const PROBES = 30;
const ignore = !Deno.env.get("TEST_DATABASE_URL");

/** A runner process (it serves no HTTP, so nothing to wait for), its output kept. */
function spawn(script: string, env: Record<string, string>): Promise<ServerProcess> {
  return startServerProcess({
    entry: script,
    env: { LOG_LEVEL: "info", PROBE_ALLOW_NETWORKS: "127.0.0.0/8", ...env },
    waitReady: false,
    output: "capture",
  });
}

/** Polls `check` until it holds; fails with `what` after `ms` (a bound, not a timing claim). */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

async function setUp(db: Db, target: Target) {
  await migrateToLatest(db);
  const project = uniqueName();
  await db.insertInto("projects").values({ name: project }).execute();
  for (let i = 0; i < PROBES; i++) {
    await sql`insert into probes (project, probe_id, url, method, headers)
              values (${project}, ${`id${i}`}, ${`${target.origin}/p/${i}`}, 'GET', '{}')`
      .execute(db);
  }
  const keys = await db.selectFrom("probes").select(["key", "url"]).where("project", "=", project)
    .execute();
  return new Map(keys.map((k) => [String(k.key), new URL(k.url).pathname]));
}

interface Row {
  probe_key: string;
  due: number;
  started: number;
  runner: string;
}

async function results(db: Db): Promise<Row[]> {
  const rows = await db.selectFrom("probe_results")
    .select(["probe_key", "due_at", "started_at", "runner"]).orderBy("due_at").execute();
  return rows.map((r) => ({
    probe_key: String(r.probe_key),
    due: new Date(r.due_at).getTime(),
    started: new Date(r.started_at).getTime(),
    runner: r.runner,
  }));
}

function assertNoDuplicates(rows: Row[]) {
  const seen = new Set<string>();
  for (const r of rows) {
    const id = `${r.probe_key}@${r.due}`;
    assert.ok(!seen.has(id), `run ${id} recorded twice`);
    seen.add(id);
  }
}

Deno.test({
  name: "two runner processes share the probes: each due run once; a killed one's claims pass on",
  ignore,
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const handle = await openDatabase({ kind: "postgres", url, poolSize: 2 });
    const target = await startTarget({ countOnly: true, delayMs: 100 });
    const procs: ServerProcess[] = [];
    const start = async (id: string) => {
      const p = await spawn(FIXTURE, {
        DATABASE_URL: url,
        RUNNER_ID: id,
        TEST_INTERVAL_MS: String(INTERVAL),
        TEST_LEASE_MS: String(LEASE),
        PROBE_TIMEOUT_MS: "1000",
      });
      procs.push(p);
      return p;
    };
    try {
      const db = handle.db;
      const paths = await setUp(db, target);

      // Phase 1: both run for a while, then stop cleanly.
      const a = await start("runner-a");
      const b = await start("runner-b");
      await until("every probe ran 4 times", async () => {
        const rows = await results(db);
        return [...paths.keys()].every((k) => rows.filter((r) => r.probe_key === k).length >= 4);
      });
      a.kill("SIGTERM");
      b.kill("SIGTERM");
      assert.equal((await a.status).code, 0, a.output());
      assert.equal((await b.status).code, 0, b.output());

      let rows = await results(db);
      assertNoDuplicates(rows);
      for (const [key, path] of paths) {
        const mine = rows.filter((r) => r.probe_key === key);
        // Every due run executed once: the target saw exactly the runs recorded ...
        assert.equal(target.counts.get(path), mine.length, `${path} hits vs results`);
        // ... and no due time was missed: the first run is due at once, then on the grid.
        assert.ok(mine[1].due - mine[0].due <= INTERVAL);
        for (let i = 2; i < mine.length; i++) {
          assert.equal(mine[i].due - mine[i - 1].due, INTERVAL, `${path} slot ${i}`);
        }
      }
      const byRunner = new Set(rows.map((r) => r.runner));
      assert.deepEqual([...byRunner].sort(), ["runner-a", "runner-b"], "both shared the work");
      const held = await db.selectFrom("probe_schedule").select("probe_key")
        .where("leased_by", "is not", null).execute();
      assert.deepEqual(held, [], "a clean stop gives back every claim");

      // Phase 2: two again; one is killed while it holds claims.
      const c = await start("runner-c");
      const d = await start("runner-d");
      await until("runner-c holds claims after recording runs", async () => {
        const recorded = await db.selectFrom("probe_results").select("id")
          .where("runner", "=", "runner-c").limit(1).execute();
        const claims = await db.selectFrom("probe_schedule").select("probe_key")
          .where("leased_by", "=", "runner-c").execute();
        return recorded.length > 0 && claims.length > 0;
      });
      c.kill("SIGKILL");
      await c.status;
      const killedAt = Date.now();
      const orphaned = (await db.selectFrom("probe_schedule")
        .select(["probe_key", "next_due_at", "lease_until"])
        .where("leased_by", "=", "runner-c").execute())
        .map((r) => ({
          key: String(r.probe_key),
          due: new Date(r.next_due_at).getTime(),
          leaseUntil: new Date(r.lease_until!).getTime(),
        }));
      assert.ok(orphaned.length > 0, "the killed runner held claims");

      await until("runner-d ran the killed runner's claimed runs and carried on", async () => {
        const now = await results(db);
        const taken = orphaned.every((o) =>
          now.some((r) => r.probe_key === o.key && r.due === o.due && r.runner === "runner-d")
        );
        const carriedOn = [...paths.keys()].every((k) =>
          now.some((r) => r.probe_key === k && r.started > killedAt + LEASE)
        );
        return taken && carriedOn;
      });
      d.kill("SIGTERM");
      assert.equal((await d.status).code, 0, d.output());

      rows = await results(db);
      assertNoDuplicates(rows);
      for (const o of orphaned) {
        const run = rows.find((r) => r.probe_key === o.key && r.due === o.due)!;
        assert.equal(run.runner, "runner-d");
        // Taken over only once the lease had run out, never while the claim still held.
        assert.ok(run.started >= o.leaseUntil, "picked up after the lease timeout");
      }
      const killedRuns = rows.filter((r) => r.runner === "runner-c" && r.started > killedAt);
      assert.deepEqual(killedRuns, []);
    } finally {
      for (const p of procs) {
        p.kill("SIGKILL");
        await p.status;
      }
      await target.close();
      await handle.close();
      await drop();
    }
  },
});

Deno.test({
  name: "deno task runner runs probes with no HTTP API and stops cleanly on SIGTERM",
  ignore,
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const handle = await openDatabase({ kind: "postgres", url, poolSize: 1 });
    const target = await startTarget();
    let proc: ServerProcess | undefined;
    try {
      const paths = await setUp(handle.db, target);
      proc = await spawn(RUNNER_ENTRY, { DATABASE_URL: url, PROBE_INTERVAL_SECONDS: "10" });
      // New probes are due at once, so every one runs well within the first interval.
      await until("every probe ran", async () => {
        const rows = await results(handle.db);
        return new Set(rows.map((r) => r.probe_key)).size === paths.size;
      });
      assert.ok(!proc.output().includes("listening"), "no HTTP server");
      proc.kill("SIGTERM");
      const status = await proc.status;
      assert.equal(status.code, 0, proc.output());
      assert.match(proc.output(), /"msg":"runner stopped"/);
    } finally {
      if (proc) {
        proc.kill("SIGKILL");
        await proc.status;
      }
      await target.close();
      await handle.close();
      await drop();
    }
  },
});

Deno.test("deno task runner refuses to start without PostgreSQL", async () => {
  const proc = await spawn(RUNNER_ENTRY, { DATABASE_URL: "" });
  const status = await proc.status;
  assert.equal(status.code, 1);
  assert.match(proc.output(), /DATABASE_URL/);
});
