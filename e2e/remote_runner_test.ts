/**
 * Remote runners as processes (issue 21): `deno task runner:remote` against `deno task start`
 * on PostgreSQL. Two runners sharing a location's work (each due run made and recorded once, the
 * target hit once per recorded run, the User-Agent naming the location); a runner killed with
 * SIGKILL mid-batch (its runs claimed again after their lease, none recorded twice); the link
 * cut by a TCP proxy that drops connections, then restored (the probes checked all through the
 * cut, every result delivered, once); and
 * the same results posted twice. PostgreSQL only: the test reads the results' due times.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type Db, openDatabase } from "../server/storage/database.ts";
import { createPostgresDatabase, uniqueName } from "../server/testing/app.ts";
import { restCall, type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { startTarget, type Target } from "../server/testing/target_server.ts";
import { startTcpProxy } from "../server/testing/tcp_proxy.ts";

const REMOTE_ENTRY = new URL("../server/runner/remote/main.ts", import.meta.url).pathname;
const KEY = "e2e-remote-key-0123456789";
const ignore = !Deno.env.get("TEST_DATABASE_URL");
/**
 * The link is down this long (the issue's two minutes): longer than the runs' lease (2 × 8 s +
 * 10 s), far under the buffer's 10 minutes. What was under way when the link went is finished,
 * and the runner goes on running its probes on their grid meanwhile; the results wait in the
 * buffer and go when the link is back; no other runner of the location took those runs over
 * meanwhile, so they are recorded, once.
 */
const CUT_MS = 120_000;

/** Polls `check` until it holds; fails with `what` after `ms` (a bound, not a timing claim). */
async function until(what: string, check: () => Promise<boolean>, ms = 90_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up waiting: ${what}`);
}

function remote(serviceUrl: string, token: string, id: string): Promise<ServerProcess> {
  return startServerProcess({
    entry: REMOTE_ENTRY,
    env: {
      SERVICE_URL: serviceUrl,
      LOCATION_TOKEN: token,
      RUNNER_ID: id,
      PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
      LOG_LEVEL: "info",
    },
    waitReady: false,
    output: "capture",
  });
}

/** A location with a project of `count` probes of `target` (10 s apart) that run there only. */
async function place(
  service: ServerProcess,
  target: Target,
  count: number,
  timeoutMs?: number,
) {
  const location = uniqueName("loc");
  const made = await restCall(service, KEY, "POST", "/locations", { name: location });
  assert.equal(made.status, 201);
  const project = uniqueName();
  assert.equal((await restCall(service, KEY, "POST", "/projects", { project })).status, 201);
  for (let i = 0; i < count; i++) {
    const res = await restCall(service, KEY, "POST", `/projects/${project}/probes`, {
      url: `${target.origin}/${location}/${i}`,
      interval_seconds: 10,
      locations: [location],
      ...(timeoutMs && { timeout_ms: timeoutMs }),
    });
    assert.equal(res.status, 201);
  }
  return { location, token: made.body.data.token as string, project };
}

interface Row {
  probe_key: string;
  due: number;
  started: number;
  runner: string;
  url: string;
}

async function recorded(db: Db, location: string): Promise<Row[]> {
  const { rows } = await sql<
    { probe_key: string; due_at: Date; started_at: Date; runner: string; url: string }
  >`
    select r.probe_key::text, r.due_at, r.started_at, r.runner, p.url
    from probe_results r join probes p on p.key = r.probe_key
    where r.location = ${location} order by r.due_at`.execute(db);
  return rows.map((r) => ({
    probe_key: r.probe_key,
    due: new Date(r.due_at).getTime(),
    started: new Date(r.started_at).getTime(),
    runner: r.runner,
    url: r.url,
  }));
}

function assertOnce(rows: Row[]) {
  const seen = new Set<string>();
  for (const r of rows) {
    const id = `${r.probe_key}@${r.due}`;
    assert.ok(!seen.has(id), `run ${id} recorded twice`);
    seen.add(id);
  }
}

/** Target hits per probe URL path. */
const hitsOf = (target: Target, location: string) => {
  const hits = new Map<string, number>();
  for (const h of target.hits) {
    if (h.path.startsWith(`/${location}/`)) hits.set(h.path, (hits.get(h.path) ?? 0) + 1);
  }
  return hits;
};

const resultsPerPath = (rows: Row[]) => {
  const per = new Map<string, number>();
  for (const r of rows) {
    const path = new URL(r.url).pathname;
    per.set(path, (per.get(path) ?? 0) + 1);
  }
  return per;
};

Deno.test({
  name: "remote runners: sharing, SIGKILL, a cut link and duplicate posts (PostgreSQL)",
  ignore,
  async fn(t) {
    const database = await createPostgresDatabase(undefined, "probe_remote");
    const dataDir = await Deno.makeTempDir({ prefix: "remote-runner-" });
    const service = await startServerProcess({
      env: {
        DATABASE_URL: database.url,
        SERVICE_API_KEY: KEY,
        DATA_DIR: dataDir,
        PROBE_TIMEOUT_MS: "1000",
        LOG_LEVEL: "warn",
      },
      output: "capture",
    });
    const handle = await openDatabase({ kind: "postgres", url: database.url });
    const db = handle.db;
    const target = await startTarget();
    try {
      await t.step("--help explains the settings", async () => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["run", "--allow-all", REMOTE_ENTRY, "--help"],
          stdout: "piped",
        }).output();
        assert.equal(out.code, 0);
        const text = new TextDecoder().decode(out.stdout);
        for (const name of ["SERVICE_URL", "LOCATION_TOKEN", "PROBE_ALLOW_NETWORKS"]) {
          assert.ok(text.includes(name), name);
        }
      });

      await t.step("two runners share the work: each run made and recorded once", async () => {
        const { location, token } = await place(service, target, 20);
        const a = await remote(service.url, token, "r-a");
        const b = await remote(service.url, token, "r-b");
        await until("two runs of every probe", async () => {
          const per = resultsPerPath(await recorded(db, location));
          return per.size === 20 && [...per.values()].every((n) => n >= 2);
        });
        await Promise.all([a.stop(15_000), b.stop(15_000)]);
        const rows = await recorded(db, location);
        assertOnce(rows);
        assert.deepEqual(hitsOf(target, location), resultsPerPath(rows), "one hit per result");
        const runners = new Set(rows.map((r) => r.runner.split("#")[0]));
        assert.deepEqual([...runners].sort(), ["r-a", "r-b"], "both took part");
        const agents = new Set(
          target.hits.filter((h) => h.path.startsWith(`/${location}/`))
            .map((h) => h.headers["user-agent"]),
        );
        assert.equal(agents.size, 1);
        assert.match([...agents][0], new RegExp(`^probe-service/\\S+ \\(location=${location}\\)$`));
        const read = await restCall(service, KEY, "GET", `/locations/${location}`);
        assert.ok(read.body.data.last_seen_at !== null);
        assert.ok(read.body.data.checks_per_minute > 0);
      });

      await t.step("a runner killed mid-batch: its runs are made again, none twice", async () => {
        const slow = await startTarget({ delayMs: 4000 });
        try {
          // Runs of 4 s with a timeout of 8 s: leased 26 s.
          const { location, token } = await place(service, slow, 10, 8000);
          const a = await remote(service.url, token, "k-a");
          await until(
            "the doomed runner's runs under way",
            () => Promise.resolve(hitsOf(slow, location).size === 10),
            30_000,
          );
          const killedAt = Date.now();
          a.kill("SIGKILL");
          await a.status;
          const b = await remote(service.url, token, "k-b");
          await until(
            "a result of every probe",
            async () => resultsPerPath(await recorded(db, location)).size === 10,
          );
          await b.stop(15_000);
          const rows = await recorded(db, location);
          assertOnce(rows);
          assert.ok(
            rows.every((r) => r.runner.startsWith("k-b#")),
            "the dead runner posted nothing",
          );
          // The runs the dead runner had claimed were made again by the other, after the lease.
          const first = Math.min(...rows.map((r) => r.due));
          const { rows: claims } = await sql<{ runner: string }>`
            select runner from location_claims where location = ${location} order by issued_at`
            .execute(db);
          assert.equal(claims[0].runner, "k-a");
          assert.ok(rows.some((r) => r.due === first && r.started >= killedAt));
        } finally {
          await slow.close();
        }
      });

      await t.step("the link cut then restored: every result delivered, once", async () => {
        const proxy = startTcpProxy(service.port);
        const paced = await startTarget({ delayMs: 2000 });
        try {
          const { location, token } = await place(service, paced, 10, 8000);
          const runner = await remote(proxy.url, token, "c-a");
          await until(
            "a result of every probe",
            async () => resultsPerPath(await recorded(db, location)).size === 10,
          );
          // Cut while runs are under way (each takes 2 s): their results wait in the buffer.
          const total = () => [...hitsOf(paced, location).values()].reduce((a, b) => a + b, 0);
          const before = total();
          await until("a run under way", () => Promise.resolve(total() > before));
          const cutAt = Date.now();
          proxy.cut();
          await new Promise((r) => setTimeout(r, CUT_MS));
          proxy.restore();
          await runner.waitForLine((l) => l.includes("service reachable again"), 60_000);
          await until(
            "results made during the cut recorded",
            async () =>
              (await recorded(db, location)).some((r) =>
                r.started >= cutAt - 2000 &&
                r.started < cutAt + CUT_MS
              ),
          );
          await runner.stop(15_000);
          assert.ok(runner.output().includes("service unreachable"));
          const rows = await recorded(db, location);
          assertOnce(rows);
          assert.deepEqual(hitsOf(paced, location), resultsPerPath(rows), "one hit per result");
          // The runner went on checking through the cut: every probe has runs from its last
          // half minute, delivered after it, each about an interval after the one before.
          const late = rows.filter((r) =>
            r.started >= cutAt + CUT_MS - 30_000 && r.started < cutAt + CUT_MS
          );
          assert.equal(resultsPerPath(late).size, 10, "every probe checked late in the cut");
          const during = rows.filter((r) => r.due > cutAt && r.due < cutAt + CUT_MS);
          assert.ok(
            during.length >= 10 * (CUT_MS / 10_000 - 2),
            `${during.length} runs in the cut`,
          );
        } finally {
          await proxy.close();
          await paced.close();
        }
      });

      await t.step("results posted twice are recorded once", async () => {
        const { location, token } = await place(service, target, 1);
        const call = (path: string, body: unknown) =>
          fetch(`${service.url}/api/v1${path}`, {
            method: "POST",
            headers: { "x-service-api-key": token, "content-type": "application/json" },
            body: JSON.stringify(body),
          }).then((r) => r.json());
        const who = { runner: "dup", version: "1" };
        let runs: { run_id: string }[] = [];
        await until("a claimable run", async () => {
          runs = (await call("/runner/claim", { ...who, wait_seconds: 1 })).data.runs;
          return runs.length > 0;
        });
        const results = runs.map((r) => ({
          run_id: r.run_id,
          started_at: new Date().toISOString(),
          duration_ms: 3,
          outcome: "up",
          http_status: 200,
          error: null,
          address: "127.0.0.1",
          failed_checks: null,
        }));
        const first = await call("/runner/results", { ...who, results });
        const second = await call("/runner/results", { ...who, results });
        assert.equal(first.data.recorded, 1);
        assert.equal(second.data.duplicate, 1);
        assert.equal((await recorded(db, location)).length, 1);
      });
    } finally {
      await target.close();
      await service.stop();
      await handle.close();
      await database.drop();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
