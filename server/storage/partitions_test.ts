/**
 * Raw results in daily partitions (so old days drop whole instead of by slow deletes): created
 * ahead and dropped whole across a month, rows outside every partition kept and moved, the existing
 * rows kept by the migration, and a deleted project's history removed by a job that resumes where
 * it stopped. Both databases.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { Migrator } from "kysely/migration";
import { migrations } from "../../migrations/mod.ts";
import { type Db, openDatabase } from "./database.ts";
import { migrateToLatest } from "./migrator.ts";
import { deleteProject } from "../domain/projects.ts";
import { listResults, probeStats } from "../domain/results.ts";
import {
  apiSuite,
  type Backend,
  backends,
  createPostgresDatabase,
  freshDatabase,
  openDropping,
  uniqueName,
} from "../testing/app.ts";
import {
  DAY_MS,
  dayOf,
  DEFAULT_PARTITION,
  listPartitions,
  maintainPartitions,
  PARTITION_AHEAD_DAYS,
  partitionName,
} from "./partitions.ts";
import { pruneOnce, purgeDeleted } from "../runner/prune.ts";
import { insertRuns, type Run } from "../runner/store.ts";

const run = (key: string, at: number): Run => ({
  key,
  due: at,
  result: {
    startedAt: new Date(at),
    durationMs: 7,
    outcome: "up",
    httpStatus: 200,
    error: null,
    address: "192.0.2.1",
  },
});

async function addProject(db: Db, project: string, probes: number): Promise<string[]> {
  await sql`insert into projects (name) values (${project})`.execute(db);
  const { rows } = await sql<{ key: string }>`
    insert into probes (project, probe_id, url, method, headers)
    select ${project}, 'id-' || g, 'https://' || ${project} || '.test/' || g, 'GET', '{}'::json
    from generate_series(1, ${probes}) g returning key::text as key`.execute(db);
  return rows.map((r) => r.key);
}

/** Raw results of some probes (all if none named), as stored. */
async function countResults(db: Db, keys?: string[]): Promise<number> {
  const where = keys ? sql`where probe_key = any(${`{${keys.join(",")}}`}::bigint[])` : sql``;
  const { rows: [row] } = await sql<{ n: number }>`
    select count(*)::int as n from probe_results ${where}`.execute(db);
  return row.n;
}

async function countRollups(db: Db, keys: string[]): Promise<number> {
  const { rows: [row] } = await sql<{ n: number }>`select count(*)::int as n from probe_rollups
    where probe_key = any(${`{${keys.join(",")}}`}::bigint[])`.execute(db);
  return row.n;
}

/** Where each row of a probe is stored, by partition name. */
async function placesOf(db: Db, key: string): Promise<string[]> {
  const { rows } = await sql<{ place: string }>`
    select tableoid::regclass::text as place from probe_results where probe_key = ${key}
    order by started_at`.execute(db);
  return rows.map((r) => r.place);
}

for (const backend of backends()) {
  Deno.test(`daily partitions across a simulated month [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    try {
      const [key] = await addProject(db, "month", 1);
      const start = dayOf(Date.now()) + 12 * 3_600_000;
      const retentionDays = 7;
      let dropped = 0;
      for (let d = 0; d < 31; d++) {
        const now = start + d * DAY_MS;
        const report = await pruneOnce(db, {
          now,
          retentionDays,
          pause: () => Promise.resolve(),
        });
        dropped += report.partitionsDropped;
        // Two runs a day: at the simulated noon and one second before midnight.
        await insertRuns(db, "test", [run(key, now), run(key, dayOf(now) + DAY_MS - 1000)]);
        const days = await listPartitions(db);
        for (let a = 0; a <= PARTITION_AHEAD_DAYS; a++) {
          assert.ok(days.includes(dayOf(now) + a * DAY_MS), `day ${d}: partition ${a} ahead`);
        }
        assert.ok(
          days.every((day) => day + DAY_MS > now - retentionDays * DAY_MS),
          `day ${d}: no partition wholly past the retention is left`,
        );
      }
      assert.ok(dropped >= 31 - retentionDays - 1, `dropped ${dropped}`);
      // Every run landed in its day's partition, none in the default one.
      const places = await placesOf(db, key);
      assert.ok(places.length > 0);
      for (const place of places) assert.match(place, /^probe_results_p\d{8}$/);
      // Kept: the days within the retention (and at most the one day more the drops allow).
      const end = start + 30 * DAY_MS;
      const { rows: [span] } = await sql<{ first: Date | string; n: number }>`
        select min(started_at) as first, count(*)::int as n from probe_results
        where probe_key = ${key}`.execute(db);
      const oldest = new Date(span.first).getTime();
      assert.ok(oldest >= end - (retentionDays + 1) * DAY_MS, "nothing older than a day more");
      assert.ok(oldest <= end - retentionDays * DAY_MS + DAY_MS, "the retention is kept");
      assert.ok(span.n >= 2 * retentionDays && span.n <= 2 * (retentionDays + 2), `${span.n}`);
    } finally {
      await handle.close();
    }
  });

  Deno.test(`a fresh test database holds the partitions of its day, not of the day its copy was made [${backend}]`, async () => {
    // The test databases are copies of one migrated database kept between runs; migrating made
    // the partitions of its day on. A copy made days ago would hold those days' partitions.
    const handle = await freshDatabase(backend);
    try {
      const days = await listPartitions(handle.db);
      const today = dayOf(Date.now());
      // Yesterday's too, for a run that crossed midnight since its copy was made.
      assert.ok(days.length > 0 && days[0] >= today - DAY_MS, days.map(partitionName).join(" "));
      assert.ok(days.includes(today + PARTITION_AHEAD_DAYS * DAY_MS) || days[0] < today);
    } finally {
      await handle.close();
    }
  });

  Deno.test(`rows outside every partition are kept, and moved when their day's partition is made [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    try {
      const [key] = await addProject(db, "ahead", 1);
      const far = dayOf(Date.now()) + 40 * DAY_MS + 3_600_000;
      const past = dayOf(Date.now()) - 3 * DAY_MS + 3_600_000;
      await insertRuns(db, "test", [run(key, far), run(key, past)]);
      assert.deepEqual(await placesOf(db, key), [DEFAULT_PARTITION, DEFAULT_PARTITION]);
      // Within the retention (and up to a year ahead), a day with rows in the default partition
      // gets its partition, and its rows move there.
      const report = await maintainPartitions(db, { now: Date.now(), retentionDays: 7 });
      assert.ok(report.created >= 2);
      assert.deepEqual(await placesOf(db, key), [
        partitionName(dayOf(past)),
        partitionName(dayOf(far)),
      ]);
      // Rows of the default partition past the retention are deleted, not moved.
      const old = dayOf(Date.now()) - 30 * DAY_MS;
      await insertRuns(db, "test", [run(key, old)]);
      await pruneOnce(db, { now: Date.now(), retentionDays: 7, pause: () => Promise.resolve() });
      const { rows: [left] } = await sql<{ n: number }>`select count(*)::int as n
        from probe_results where probe_key = ${key} and started_at = ${new Date(old)}`.execute(db);
      assert.equal(left.n, 0);
    } finally {
      await handle.close();
    }
  });

  Deno.test(`the migration to partitions keeps every result [${backend}]`, async () => {
    const handle = await beforePartitions(backend);
    const db = handle.db;
    try {
      const [key] = await addProject(db, "kept", 1);
      const now = Date.now();
      // 50 days of results, one every 6 hours, the oldest first.
      await sql`insert into probe_results
          (probe_key, due_at, started_at, duration_ms, outcome, http_status, runner)
        select ${key}, t, t, 5, 'up', 200, 'old'
        from generate_series(${new Date(now - 50 * DAY_MS)}::timestamptz,
                             ${new Date(now - 60_000)}::timestamptz, interval '6 hours') t`
        .execute(db);
      const { rows: before } = await sql<{ id: string; started_at: Date | string }>`
        select id::text as id, started_at from probe_results order by id`.execute(db);
      assert.equal(before.length, 200);

      await migrateToLatest(db);

      const { rows: after } = await sql<{ id: string; started_at: Date | string }>`
        select id::text as id, started_at from probe_results order by id`.execute(db);
      assert.deepEqual(after, before, "the same rows, with their ids");
      const { rows: [kind] } = await sql<{ relkind: string }>`
        select relkind::text from pg_class where oid = 'probe_results'::regclass`.execute(db);
      assert.equal(kind.relkind, "p");
      for (const place of await placesOf(db, key)) assert.match(place, /^probe_results_p\d{8}$/);
      // Read back through the service.
      const page = await listResults({
        db,
        input: { project: "kept", probeId: "id-1", limit: 500 },
      });
      assert.equal(page.data.length, 200);
      // New rows take ids after the old ones.
      await insertRuns(db, "test", [run(key, now)]);
      const { rows: [newest] } = await sql<{ id: string }>`
        select id::text as id from probe_results where runner = 'test'`.execute(db);
      assert.ok(BigInt(newest.id) > BigInt(before.at(-1)!.id));

      // And back: one plain table again, with every row.
      const migrator = new Migrator({
        db,
        provider: { getMigrations: () => Promise.resolve(migrations) },
      });
      const back = await migrator.migrateTo(previousMigration());
      if (back.error) throw back.error;
      const { rows: [plain] } = await sql<{ relkind: string; n: number }>`
        select relkind::text, (select count(*)::int from probe_results) as n
        from pg_class where oid = 'probe_results'::regclass`.execute(db);
      assert.deepEqual(plain, { relkind: "r", n: 201 });
    } finally {
      await handle.close();
    }
  });

  Deno.test(`a deleted project's history is purged by a job that resumes after a stop [${backend}]`, async () => {
    const { handle, url } = await reopenable(backend);
    let db = handle.db;
    let second: Awaited<ReturnType<typeof openDatabase>> | undefined;
    try {
      const doomed = await addProject(db, "doomed", 40);
      const kept = await addProject(db, "kept", 5);
      const now = Date.now();
      const runs = (keys: string[]) =>
        keys.flatMap((key) => Array.from({ length: 25 }, (_, i) => run(key, now - i * 3_600_000)));
      await insertRuns(db, "test", runs(doomed));
      await insertRuns(db, "test", runs(kept));
      const keptBefore = [await countResults(db, kept), await countRollups(db, kept)];

      await deleteProject({ db, project: "doomed" });
      assert.equal(await countResults(db, doomed), 1000, "the delete leaves the history");

      // Stopped after three batches of 100 rows.
      let pauses = 0;
      const first = await purgeDeleted(db, {
        batch: 100,
        keys: 10,
        pause: () => (pauses++, Promise.resolve()),
        stopped: () => pauses >= 3,
      });
      assert.ok(first.results > 0 && first.results < 1000, `purged ${first.results}`);
      const left = await countResults(db, doomed);
      assert.ok(left > 0 && left < 1000);
      const { rows: [tombs] } = await sql<{ n: number }>`
        select count(*)::int as n from probe_tombstones`.execute(db);
      assert.ok(tombs.n > 0, "tombstones remain for what is left");

      // A new process (PostgreSQL: connections of its own) goes on.
      if (backend === "postgres") {
        second = await openDatabase({ kind: "postgres", url: url! });
        db = second.db;
      }
      const rest = await purgeDeleted(db, { batch: 100, keys: 10, pause: () => Promise.resolve() });
      assert.equal(first.results + rest.results, 1000);
      assert.equal(await countResults(db, doomed), 0);
      assert.equal(await countRollups(db, doomed), 0);
      const { rows: [none] } = await sql<{ n: number }>`
        select count(*)::int as n from probe_tombstones`.execute(db);
      assert.equal(none.n, 0);
      assert.deepEqual([await countResults(db, kept), await countRollups(db, kept)], keptBefore);
    } finally {
      await second?.close();
      await handle.close();
    }
  });
}

Deno.test({
  name: "the purge keeps a probe's tombstone while a row of it was held by another transaction " +
    "[postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { handle, url } = await reopenable("postgres");
    const db = handle.db;
    const other = await openDatabase({ kind: "postgres", url: url! });
    try {
      const keys = await addProject(db, "held", 2);
      const now = Date.now();
      await insertRuns(
        db,
        "test",
        keys.flatMap((key) => Array.from({ length: 10 }, (_, i) => run(key, now - i * 60_000))),
      );
      await deleteProject({ db, project: "held" });
      // As the partition maintenance does when it moves a day's rows out of the default
      // partition: a row held by a transaction that does not delete it for good.
      const trx = await other.db.startTransaction().execute();
      try {
        await sql`select id from probe_results where probe_key = ${keys[0]} limit 1 for update`
          .execute(trx);
        const first = await purgeDeleted(db, { pause: () => Promise.resolve() });
        assert.equal(first.probes, 0);
        assert.equal(await countResults(db, keys), 1, "the held row is left");
        const { rows: [tombs] } = await sql<{ n: number }>`
          select count(*)::int as n from probe_tombstones`.execute(db);
        assert.equal(tombs.n, 2, "and so are the tombstones");
      } finally {
        await trx.rollback().execute();
      }
      const rest = await purgeDeleted(db, { pause: () => Promise.resolve() });
      assert.equal(rest.probes, 2);
      assert.equal(await countResults(db, keys), 0);
    } finally {
      await other.close();
      await handle.close();
    }
  },
});

/** A fresh migrated database; on PostgreSQL with its address, for a second handle on it. */
async function reopenable(backend: Backend) {
  if (backend === "pglite") return { handle: await freshDatabase(backend), url: undefined };
  const created = await createPostgresDatabase();
  const handle = await openDropping(created);
  await migrateToLatest(handle.db);
  return { handle, url: created.url };
}

/** The migration before the partitions. */
function previousMigration(): string {
  const names = Object.keys(migrations).sort();
  return names[names.indexOf("2026_11_25_110000_partition_probe_results") - 1];
}

/** A database migrated up to the migration before the partitions. */
function beforePartitions(backend: Backend) {
  return freshDatabase(backend, { migratedTo: previousMigration() });
}

apiSuite("a project delete with its history left to the purge", (test) => {
  test("answers 200 with many results, and no read shows them again", async ({ api, app }) => {
    const db = app.database.db;
    const project = uniqueName("big");
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const created = await api.post(`/api/v1/projects/${project}/probes`, {
      url: "https://big.test/health",
    });
    const probeId: string = created.body.data.probe_id;
    const others = await addProject(db, uniqueName("bulk"), 1);
    const { rows } = await sql<{ key: string }>`
      insert into probes (project, probe_id, url, method, headers)
      select ${project}, 'id-' || g, 'https://big.test/' || g, 'GET', '{}'::json
      from generate_series(1, 2000) g returning key::text as key`.execute(db);
    const { key } = await db.selectFrom("probes").select("key").where("project", "=", project)
      .where("probe_id", "=", probeId).executeTakeFirstOrThrow();
    const keys = [String(key), ...rows.map((r) => r.key)];
    const now = Date.now();
    await sql`insert into probe_results
        (probe_key, due_at, started_at, duration_ms, outcome, http_status, runner)
      select k, t, t, 5, 'up', 200, 'seed'
      from unnest(${`{${keys.join(",")}}`}::bigint[]) k,
           generate_series(${new Date(now - 3 * 3_600_000)}::timestamptz,
                           ${new Date(now - 60_000)}::timestamptz, interval '10 minutes') t`
      .execute(db);
    await insertRuns(db, "test", [run(String(key), now - 30_000), run(others[0], now - 30_000)]);
    const stored = await countResults(db, keys);
    assert.ok(stored > 30_000, `${stored} results`);

    const res = await api.delete(`/api/v1/projects/${project}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { project, deleted: true, archived: true });
    assert.equal(await countResults(db, keys), stored, "the history goes later");
    assert.equal(
      Number(
        (await db.selectFrom("probe_schedule").select((e) => e.fn.countAll().as("n"))
          .where("probe_key", "in", keys).executeTakeFirstOrThrow()).n,
      ),
      0,
      "its schedules went at once",
    );

    // The same project and probe again: new keys, none of the old history.
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const again = await api.post(`/api/v1/projects/${project}/probes`, {
      url: "https://big.test/health",
    });
    assert.equal(again.body.data.probe_id, probeId);
    const path = `/api/v1/projects/${project}/probes/${probeId}`;
    assert.deepEqual((await api.get(`${path}/results`)).body.data, []);
    const stats = (await api.get(`${path}/stats?window=24h`)).body.data;
    assert.equal(stats.runs, 0);
    const board = (await api.get(`/api/v1/projects/${project}/status`)).body.data;
    assert.equal(board.length, 1);
    assert.equal(board[0].runs_24h, 0);
    const overview = (await api.get(`/api/v1/overview?project=${project}`)).body.data;
    const shown = overview.projects.find((p: { project: string }) => p.project === project);
    assert.equal(shown.probes.length, 1);
    assert.equal(shown.probes[0].uptime_24h, null);
    assert.equal(shown.probes[0].p95_24h, null);
    const direct = await probeStats({
      db,
      input: { project, probeId, window: "24h" },
    });
    assert.equal(direct.runs, 0);

    const purged = await purgeDeleted(db, { pause: () => Promise.resolve() });
    assert.ok(purged.probes >= keys.length);
    assert.equal(await countResults(db, keys), 0);
    assert.equal(await countResults(db, others), 1, "another project's result stays");
  });
});
