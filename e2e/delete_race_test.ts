/**
 * The runner's recording racing a project delete (PostgreSQL: the embedded database has one
 * connection, so nothing races there). The deadlock case: a delete of a 20,000-probe project while
 * its runs are recorded must not log `deadlock detected` nor leave runs unrecorded.
 *
 * "No lost result" means, for every finished run handed to `recordRuns`:
 *
 * - either it is recorded: exactly one raw result with its probe and due time, counted in the
 *   hourly rollup, and `recordRuns` counted it as recorded;
 * - or its probe was deleted by the delete (so it is in the archive and not in `probes`), no
 *   result of it exists, and `recordRuns` counted it as lost;
 *
 * and neither the delete nor any recording fails. In the end-to-end tier: the race needs deletes of
 * 10,000 probes that take a while, minutes of a busy machine.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import type { Db } from "../server/storage/database.ts";
import { deleteProject } from "../server/domain/projects.ts";
import { freshDatabase } from "../server/testing/app.ts";
import type { RunResult } from "../server/runner/execute.ts";
import {
  claimDue,
  type Completed,
  keyText,
  recordRuns,
  syncSchedules,
} from "../server/runner/store.ts";

const RUNNER = "race-runner";
/**
 * A day: each round's kept probes are next due an interval after its claim, and a shorter one
 * (a minute) had them due again, and claimed with a later round's, when rounds were slow.
 */
const INTERVAL_MS = 86_400_000;
/** Probes of the project deleted in each round: enough for its delete to take a while. */
const DOOMED = 10_000;

async function addProbes(db: Db, project: string, count: number): Promise<void> {
  await sql`insert into probes (project, probe_id, url, method, headers)
    select ${project}, 'id-' || g, 'https://' || ${project} || '.test/' || g, 'GET', '{}'::json
    from generate_series(1, ${count}) g`.execute(db);
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const result = (startedAt: Date): RunResult => ({
  startedAt,
  durationMs: 12,
  outcome: "up",
  httpStatus: 200,
  error: null,
  address: "127.0.0.1",
});

Deno.test({
  name: "a project delete racing the recording of its runs: no deadlock, no run lost [postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const handle = await freshDatabase("postgres");
    const db = handle.db;
    try {
      /** Runs of deleted probes recorded before the delete, and runs it made lost. */
      const raced = { recorded: 0, lost: 0 };
      for (let round = 0; round < 3; round++) {
        const doomed = `doomed-${round}`;
        const kept = `kept-${round}`;
        await sql`insert into projects (name) values (${doomed}), (${kept})`.execute(db);
        await addProbes(db, doomed, DOOMED);
        await addProbes(db, kept, 500);
        // Rows out of key order on disk, as a table with a history has them: a delete that
        // locked them in scan order would then lock them in another order than the runner.
        await sql`update probes set updated_at = now() where key % 3 = 0`.execute(db);
        const now = Date.now();
        await syncSchedules(db, { now, intervalMs: INTERVAL_MS });
        // Probes with no schedule row yet: the runner's sync races the delete for them.
        await sql`insert into probes (project, probe_id, url, method, headers)
          select ${doomed}, 'late-' || g, 'https://late.test/' || g, 'GET', '{}'::json
          from generate_series(1, 1000) g`.execute(db);
        // Planned with statistics, as a server's autovacuum (or the service's own ANALYZE where
        // it is off) gives them: on never-analyzed tables the first recordings took longer than
        // the delete's head start, and no run of the doomed project was recorded before it.
        await sql`analyze`.execute(db);

        const claimed = await claimDue(db, {
          now,
          horizon: now,
          leaseUntil: now + 60_000,
          runner: RUNNER,
          limit: 100_000,
        });
        assert.equal(claimed.length, DOOMED + 500);
        const startedAt = new Date(now);
        const completed: Completed[] = claimed.map((c) => ({
          key: c.key,
          due: c.due,
          nextDue: c.due + INTERVAL_MS,
          result: result(startedAt),
        }));
        const batches: Completed[][] = [];
        const order = shuffled(completed);
        for (let i = 0; i < order.length; i += 50) batches.push(order.slice(i, i + 50));

        // Four flushes at a time (as four runners would), the sync, and the delete, together;
        // the recording goes on in small batches for about as long as the delete takes, and
        // the delete starts at a different point of it in each round.
        const totals = { recorded: 0, skipped: 0, lost: 0 };
        const failures: unknown[] = [];
        const flushes = Array.from({ length: 4 }, async (_, lane) => {
          for (let i = lane; i < batches.length; i += 4) {
            await new Promise((resolve) => setTimeout(resolve, 2));
            try {
              const r = await recordRuns(db, RUNNER, batches[i]);
              totals.recorded += r.recorded;
              totals.skipped += r.skipped;
              totals.lost += r.lost;
            } catch (error) {
              failures.push(error);
            }
          }
        });
        const syncing = syncSchedules(db, { now, intervalMs: INTERVAL_MS, batch: 200 })
          .catch((error) => failures.push(error));
        await new Promise((resolve) => setTimeout(resolve, [50, 200, 400][round]));
        const deleted = await deleteProject({ db, project: doomed });
        await Promise.all([...flushes, syncing]);

        assert.deepEqual(deleted, { project: doomed, deleted: true, archived: true });
        assert.deepEqual(failures.map((e) => (e as { code?: string }).code ?? String(e)), []);

        const keyList = completed.map((c) => c.key);
        const live = new Set(
          (await sql<{ key: string | number }>`select key from probes
            where key = any(cast(${keyList} as bigint[]))`.execute(db)).rows
            .map((r) => keyText(r.key)),
        );
        const results = (await sql<{ probe_key: string | number; n: number }>`
          select probe_key, count(*)::int as n from probe_results
          where probe_key = any(cast(${keyList} as bigint[])) group by probe_key`.execute(db))
          .rows;
        const recordedKeys = new Map(results.map((r) => [keyText(r.probe_key), r.n]));
        const [archive] = (await sql<{ snapshot: { probes: { probe_id: string }[] } }>`
          select snapshot from archived_projects where project = ${doomed}`.execute(db)).rows;
        const archived = new Set(archive.snapshot.probes.map((p) => p.probe_id));
        assert.equal(archived.size, DOOMED + 1000, "the archive holds every probe of the project");
        const doomedKeys = new Set(
          claimed.filter((c) => c.target.url.includes(`${doomed}.test`)).map((c) => c.key),
        );

        for (const key of keyList) {
          const n = recordedKeys.get(key) ?? 0;
          assert.ok(n <= 1, `probe ${key}: ${n} results for one run`);
          if (n === 0) {
            assert.ok(!live.has(key), `probe ${key}: not recorded, yet its probe lives`);
            assert.ok(doomedKeys.has(key), `probe ${key}: not recorded, not the deleted project's`);
          }
        }
        raced.lost += totals.lost;
        raced.recorded += [...recordedKeys.keys()].filter((k) => doomedKeys.has(k)).length;
        assert.equal(totals.recorded, recordedKeys.size, "recorded as counted");
        assert.equal(totals.recorded + totals.lost, completed.length, "each run counted once");
        assert.equal(totals.skipped, 0);
        const [rollup] = (await sql<{ runs: number }>`
          select coalesce(sum(up + degraded + down + blocked), 0)::int as runs from probe_rollups
          where probe_key = any(cast(${keyList} as bigint[]))`.execute(db)).rows;
        assert.equal(rollup.runs, totals.recorded, "the rollups count every recorded run");
        // Nothing of the project is left but its history, which the pruner removes.
        const [left] = (await sql<{ probes: number; schedule: number; tombstones: number }>`
          select (select count(*)::int from probes where project = ${doomed}) as probes,
                 (select count(*)::int from probe_schedule s
                  where not exists (select 1 from probes p where p.key = s.probe_key))
                   as schedule,
                 (select count(*)::int from probe_tombstones
                  where probe_key = any(cast(${[...doomedKeys]} as bigint[]))) as tombstones`
          .execute(db)).rows;
        assert.deepEqual(left, { probes: 0, schedule: 0, tombstones: doomedKeys.size });
        await sql`delete from probe_results`.execute(db);
        await sql`delete from probe_rollups`.execute(db);
      }
      assert.ok(raced.recorded > 0 && raced.lost > 0, `the two did race: ${JSON.stringify(raced)}`);
    } finally {
      await handle.close();
    }
  },
});
