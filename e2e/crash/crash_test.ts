/**
 * `deno task test:crash`: the server, as a subprocess, under concurrent creates, rewrites and
 * project deletes, is killed with SIGKILL at a random moment, restarted, and checked against
 * what its clients were told: twenty rounds on PostgreSQL (when TEST_DATABASE_URL is set) and
 * twenty on the embedded database.
 *
 * Environment: CRASH_ROUNDS (20), CRASH_SEED (random; printed, to replay a failure),
 * CRASH_VERBOSE=1 (show the server's warnings and errors).
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type Db, openDatabase } from "../../server/storage/database.ts";
import { createPostgresDatabase } from "../../server/testing/app.ts";
import { type ServerProcess, startServerProcess } from "../../server/testing/process.ts";
import { Ledger, type Stored } from "./ledger.ts";
import { runWorkload, seededRandom } from "./workload.ts";

const API_KEY = "crash-test-key-0123456789";
const ROUNDS = Number(Deno.env.get("CRASH_ROUNDS") ?? 20);
const WORKERS = 8;
/** The kill comes this long after the first acknowledged write, uniformly at random (ms). */
const KILL_AFTER = [100, 1200] as const;

interface Backend {
  env: Record<string, string>;
  /** Opens the database for reading while no server holds it. */
  open(): Promise<{ db: Db; close(): Promise<void> }>;
  /** Whether the server must be stopped while the test reads the database itself. */
  exclusive: boolean;
}

async function readStored(db: Db): Promise<Stored & { orphans: number }> {
  const live = new Map<string, Map<string, number | null>>();
  for (const p of await db.selectFrom("projects").select("name").execute()) {
    live.set(p.name, new Map());
  }
  const probes = await db.selectFrom("probes").select(["project", "url", "latency"]).execute();
  let orphans = 0;
  for (const probe of probes) {
    const owner = live.get(probe.project);
    if (owner) owner.set(probe.url, probe.latency);
    else orphans++;
  }
  const archived = new Map<string, Map<string, number | null>[]>();
  const rows = await db.selectFrom("archived_projects").select(["project", "snapshot"]).execute();
  for (const row of rows) {
    const snapshot = row.snapshot as { probes: { url: string; latency: number | null }[] };
    const probes = new Map(snapshot.probes.map((p) => [p.url, p.latency]));
    archived.set(row.project, [...(archived.get(row.project) ?? []), probes]);
  }
  // The foreign key should make this impossible; the test checks rather than trusts it.
  const { count } = await sql<{ count: number }>`select count(*)::int as count from probes p
    where not exists (select 1 from projects where name = p.project)`.execute(db)
    .then((r) => r.rows[0]);
  return { live, archived, orphans: orphans + count };
}

const startServer = (backend: Backend) =>
  startServerProcess({
    env: {
      ...backend.env,
      SERVICE_API_KEY: API_KEY,
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_SECOND: "0",
      // The workload's probes point at hosts that do not exist; nothing should try them.
      RUNNER: "off",
    },
    output: Deno.env.get("CRASH_VERBOSE") === "1" ? "inherit" : "null",
  });

async function crashRounds(backend: Backend, seed: number): Promise<void> {
  const random = seededRandom(seed);
  const ledger = new Ledger();
  let server: ServerProcess = await startServer(backend);
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      let killed = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const killAfter = KILL_AFTER[0] + random() * (KILL_AFTER[1] - KILL_AFTER[0]);
      const victim = server;
      const counts = await runWorkload({
        baseUrl: server.url,
        apiKey: API_KEY,
        ledger,
        round,
        workers: WORKERS,
        random,
        stopped: () => killed,
        // The clock starts once writes flow, so that every round crashes a busy server.
        onFirstAck: () =>
          timer = setTimeout(() => {
            victim.kill("SIGKILL");
            killed = true;
          }, killAfter),
      }).finally(() => clearTimeout(timer));
      await victim.status;

      // Restarted on the same data, the server must come up and serve what it stored.
      server = await startServer(backend);
      const answer = await fetch(`${server.url}/api/v1/projects`, {
        headers: { "x-service-api-key": API_KEY },
      });
      assert.equal(answer.status, 200, `round ${round}: the restarted server answers`);
      const listed = (await answer.json()).meta.count as number;

      if (backend.exclusive) await server.stop();
      const reader = await backend.open();
      let stored;
      try {
        stored = await readStored(reader.db);
      } finally {
        await reader.close();
      }
      if (backend.exclusive) server = await startServer(backend);

      const problems = ledger.violations(stored);
      if (stored.orphans > 0) problems.push(`${stored.orphans} probes outlive their project`);
      if (listed !== stored.live.size) {
        problems.push(`the API lists ${listed} projects, the database holds ${stored.live.size}`);
      }
      assert.deepEqual(problems, [], `round ${round} (seed ${seed}) broke promises`);
      assert.ok(counts.acked > 0, `round ${round}: some writes were acknowledged`);
      ledger.settle(stored);
      console.log(
        `round ${round}: killed ${
          Math.round(killAfter)
        } ms into the writes; ${counts.acked} acknowledged, ` +
          `${counts.refused} refused, ${counts.lost} lost in the crash; ` +
          `${stored.live.size} live, ${stored.archived.size} archived`,
      );
    }
  } finally {
    await server.stop();
  }
}

const seed = Number(Deno.env.get("CRASH_SEED") ?? Math.floor(Math.random() * 2 ** 31));
console.log(`crash test seed ${seed} (CRASH_SEED=${seed} replays it)`);

Deno.test({
  name: "a crash loses nothing acknowledged [postgres]",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const database = await createPostgresDatabase(undefined, "probe_crash");
    const dataDir = await Deno.makeTempDir({ prefix: "probe-crash-" });
    await crashRounds({
      env: { DATABASE_URL: database.url, DATA_DIR: dataDir },
      exclusive: false,
      open: () => openDatabase({ kind: "postgres", url: database.url, poolSize: 1 }),
    }, seed).finally(async () => {
      await database.drop();
      await Deno.remove(dataDir, { recursive: true });
    });
  },
});

Deno.test("a crash loses nothing acknowledged [pglite]", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "probe-crash-" });
  await crashRounds({
    env: { DATA_DIR: dataDir },
    exclusive: true,
    open: () => openDatabase({ kind: "pglite", dataDir: `${dataDir}/pgdata` }),
  }, seed).finally(() => Deno.remove(dataDir, { recursive: true }));
});
