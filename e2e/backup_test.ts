/**
 * Backups of real server processes (docs/backups.md): `deno task backup` of a running embedded
 * instance, `deno task restore` into a new DATA_DIR, `deno task move-to-postgres`, and
 * PostgreSQL's own `pg_dump -Fc` / `pg_restore`. Each restored copy is started as a server and
 * read through the API.
 */
import assert from "node:assert/strict";
import { createPostgresDatabase } from "../server/testing/app.ts";
import { findPgBin } from "../server/testing/cluster.ts";
import {
  isListeningLine,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import { startTarget, type Target } from "../server/testing/target_server.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const KEY = "backup-test-key-1";
const READER_KEY = "backup-reader-key-1";
const WEBHOOK_SECRET = `whsec_${btoa("s".repeat(32))}`;
const PG_URL = Deno.env.get("TEST_DATABASE_URL");

const startServer = (env: Record<string, string>): Promise<ServerProcess> =>
  startServerProcess({
    env: { PROBE_ALLOW_NETWORKS: "127.0.0.0/8", ...env },
    output: "capture",
    readyLine: isListeningLine,
    readyTimeoutMs: 60_000,
  });

function client(server: ServerProcess, key = KEY) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/v1${path}`, {
      method,
      headers: { "x-service-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
  };
}
type Call = ReturnType<typeof client>;

/** `deno task <name> <args>` from the repository, as an operator runs it. */
async function task(name: string, args: string[], env: Record<string, string>) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", name, ...args],
    cwd: ROOT,
    env: { DATABASE_URL: "", SERVICE_API_KEY: "", ...env },
    stdin: "null",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code, stdout: decode(stdout), stderr: decode(stderr) };
}

/** Two projects, four probes on the loopback target, alert settings, a webhook with a secret. */
async function configure(call: Call, target: Target) {
  const probes: { project: string; probe_id: string }[] = [];
  for (const project of ["shop", "blog"]) {
    assert.equal(
      (await call("POST", "/projects", { project, label: `The ${project}` })).status,
      201,
    );
    for (const path of ["/ok", "/status/503"]) {
      const made = await call("POST", `/projects/${project}/probes`, {
        url: `${target.origin}${path}`,
        label: `${project} ${path}`,
      });
      assert.equal(made.status, 201, made.text);
      probes.push({ project, probe_id: made.body.data.probe_id });
    }
  }
  const hook = await call("POST", "/notification-targets", {
    name: "ops",
    kind: "webhook",
    url: `${target.origin}/echo`,
    secret: WEBHOOK_SECRET,
  });
  assert.equal(hook.status, 201, hook.text);
  const alerts = await call("PATCH", "/settings/alerts", {
    targets: ["ops"],
    failure_threshold: 2,
  });
  assert.equal(alerts.status, 200, alerts.text);
  return probes;
}

/** Runs each probe now, `times` times, on top of its schedule. */
async function runProbes(
  call: Call,
  probes: { project: string; probe_id: string }[],
  times: number,
) {
  for (let i = 0; i < times; i++) {
    for (const { project, probe_id } of probes) {
      const run = await call("POST", `/projects/${project}/probes/${probe_id}/run`);
      assert.equal(run.status, 200, run.text);
    }
  }
}

/** What the API shows: projects, probes, settings, and each probe's results (newest first). */
async function view(call: Call) {
  const get = async (path: string) => {
    const res = await call("GET", path);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    return res.body.data;
  };
  const projects = await get("/projects");
  // Each location's last run moves on as the copy's runner runs, and a state whose last run is
  // three intervals old reads `unknown` and `stale` (the copy starts with its runner off, and a
  // restore on a busy machine can take that long): the rest of its state, and the results that
  // made it, are data.
  const probes = (await get("/probes")).map((
    p: { location_states: { last_run_at: string | null; state: string; stale: boolean }[] },
  ) => ({
    ...p,
    location_states: p.location_states.map(({ last_run_at: _, state: _s, stale: _t, ...l }) => l),
  }));
  const results: Record<string, { started_at: string }[]> = {};
  for (const probe of probes) {
    results[`${probe.project}/${probe.probe_id}`] = await get(
      `/projects/${probe.project}/probes/${probe.probe_id}/results?limit=1000`,
    );
  }
  const alerts = await get("/settings/alerts");
  const targets = await get("/notification-targets");
  return { projects, probes, results, alerts, targets };
}

type View = Awaited<ReturnType<typeof view>>;

/** The copy holds the same configuration, and exactly the results of `before` up to `upTo`. */
function assertSameAsOf(copy: View, original: View, upTo: number) {
  assert.deepEqual(copy.projects, original.projects);
  assert.deepEqual(copy.probes, original.probes);
  assert.deepEqual(copy.alerts, original.alerts);
  assert.deepEqual(copy.targets, original.targets);
  for (const [probe, results] of Object.entries(original.results)) {
    const taken = results.filter((r) => Date.parse(r.started_at) <= upTo);
    const copied = copy.results[probe].filter((r) => Date.parse(r.started_at) <= upTo);
    assert.ok(taken.length >= 5, `${probe} has ${taken.length} results`);
    assert.deepEqual(copied, taken, probe);
  }
}

const resultCount = (v: View) => Object.values(v.results).reduce((n, r) => n + r.length, 0);

Deno.test("a running embedded instance is backed up, restored into a new DATA_DIR, and moved to PostgreSQL", async (t) => {
  const target = await startTarget();
  const dataDir = await Deno.makeTempDir({ prefix: "backup-source-" });
  const restoredDir = await Deno.makeTempDir({ prefix: "backup-restored-" });
  const file = `${await Deno.makeTempDir({ prefix: "backup-file-" })}/probe.jsonl.gz`;
  // The first start writes DATA_DIR/api-key: the key the moved instance must keep.
  let source = await startServer({
    DATA_DIR: dataDir,
    PROBE_INTERVAL_SECONDS: "10",
    SERVICE_API_KEYS_READONLY: READER_KEY,
  });
  const key = (await Deno.readTextFile(`${dataDir}/api-key`)).trim();
  const servers: ServerProcess[] = [source];
  const drops: (() => Promise<void>)[] = [];
  try {
    const call = client(source, key);
    const probes = await configure(call, target);
    await runProbes(call, probes, 5);
    // Every run started by now is recorded a moment later (the target answers at once): the
    // copies must hold exactly these results.
    const upTo = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    const original = await view(call);

    await t.step("deno task backup writes a backup of the running server", async () => {
      // Runs go on while the backup is read: the server is not paused for it.
      const running = runProbes(call, probes, 3);
      const backup = await task("backup", ["--output", file], {
        PROBE_SERVICE_URL: source.url,
        DATA_DIR: dataDir,
      });
      await running;
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /Backup written to .*probe\.jsonl\.gz .*projects 2, probes 4/);
      // The size printed is the file's (compressed), then what it holds uncompressed.
      const [, onDisk, uncompressed] = backup.stdout.match(
        /\((\d+) bytes, (\d+) uncompressed\)/,
      ) ?? [];
      assert.equal(Number(onDisk), (await Deno.stat(file)).size, backup.stdout);
      assert.ok(Number(uncompressed) > Number(onDisk), backup.stdout);
      // A read-only key is refused: a backup holds the webhook's secret.
      const refused = await fetch(`${source.url}/backup`, {
        headers: { authorization: `Bearer ${READER_KEY}` },
      });
      assert.equal(refused.status, 403);
      assert.equal((await refused.json()).error.code, "forbidden");
    });

    await t.step("a restore is refused while a server holds the DATA_DIR", async () => {
      const refused = await task("restore", [file, "--data-dir", dataDir], {});
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /is in use by another process/);
    });

    await t.step(
      "deno task restore loads it into a new DATA_DIR that starts with the same data",
      async () => {
        const restored = await task("restore", [file, "--data-dir", restoredDir], {});
        assert.equal(restored.code, 0, restored.stderr);
        assert.match(restored.stdout, /Restored into DATA_DIR .*projects 2, probes 4/);
        const again = await task("restore", [file, "--data-dir", restoredDir], {});
        assert.equal(again.code, 1);
        assert.match(again.stderr, /is not empty \(it holds pgdata\)/);

        // The service-wide interval is a setting, not data: the copy runs with the same one, so
        // that the probes' effective interval reads the same.
        const copy = await startServer({
          DATA_DIR: restoredDir,
          SERVICE_API_KEY: key,
          RUNNER: "off",
          PROBE_INTERVAL_SECONDS: "10",
        });
        servers.push(copy);
        const copied = await view(client(copy, key));
        assertSameAsOf(copied, original, upTo);
        // The runs made while the backup was read are there up to its snapshot, not after.
        const later = await view(call);
        assert.ok(resultCount(copied) >= resultCount(original));
        assert.ok(resultCount(copied) < resultCount(later));
        assert.equal((await copy.stop()).code, 0, copy.output());
      },
    );

    await t.step({
      name: "deno task move-to-postgres copies the stopped instance; the service carries on there",
      ignore: !PG_URL,
      fn: async () => {
        const { url, drop } = await createPostgresDatabase(PG_URL, "probe_backup");
        drops.push(drop);
        const busy = await task("move-to-postgres", ["--database-url", url], { DATA_DIR: dataDir });
        assert.equal(busy.code, 1);
        assert.match(busy.stderr, /is in use by another process/);

        assert.equal((await source.stop()).code, 0, source.output());
        const moved = await task("move-to-postgres", [], { DATA_DIR: dataDir, DATABASE_URL: url });
        assert.equal(moved.code, 0, moved.stderr);
        assert.match(moved.stdout, /Restored into PostgreSQL .*projects 2, probes 4/);
        const twice = await task("move-to-postgres", [], { DATA_DIR: dataDir, DATABASE_URL: url });
        assert.equal(twice.code, 1);
        assert.match(twice.stderr, /The database is not empty/);

        // The same DATA_DIR for its API key, the database now PostgreSQL.
        source = await startServer({
          DATA_DIR: dataDir,
          DATABASE_URL: url,
          PROBE_INTERVAL_SECONDS: "10",
        });
        servers.push(source);
        assert.match(source.output(), /"database":"postgres"/);
        const onPostgres = client(source, key);
        const carried = await view(onPostgres);
        assertSameAsOf(carried, original, upTo);
        assert.ok(resultCount(carried) > resultCount(original));

        // The runner goes on: new scheduled results appear, and new probes get new keys.
        const before = resultCount(carried);
        let now = carried;
        for (let i = 0; i < 300 && resultCount(now) <= before; i++) {
          await new Promise((r) => setTimeout(r, 100));
          now = await view(onPostgres);
        }
        assert.ok(resultCount(now) > before, "no new results on PostgreSQL");
        const added = await onPostgres("POST", "/projects/shop/probes", {
          url: `${target.origin}/status/204`,
        });
        assert.equal(added.status, 201, added.text);
      },
    });
  } finally {
    for (const server of servers) await server.stop();
    for (const drop of drops) await drop();
    await target.close();
    for (const dir of [dataDir, restoredDir, file.slice(0, file.lastIndexOf("/"))]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
});

Deno.test({
  name: "PostgreSQL: pg_dump -Fc and pg_restore --no-owner into an empty database carry the data",
  ignore: !PG_URL || !findPgBin(),
  fn: async () => {
    const target = await startTarget();
    const dataDir = await Deno.makeTempDir({ prefix: "backup-pg-" });
    const file = `${dataDir}/probe.dump`;
    const from = await createPostgresDatabase(PG_URL, "probe_backup");
    const into = await createPostgresDatabase(PG_URL, "probe_backup");
    const servers: ServerProcess[] = [];
    try {
      const source = await startServer({
        DATA_DIR: dataDir,
        DATABASE_URL: from.url,
        SERVICE_API_KEY: KEY,
      });
      servers.push(source);
      const call = client(source);
      await runProbes(call, await configure(call, target), 5);
      const upTo = Date.now();
      await new Promise((r) => setTimeout(r, 3000));
      const original = await view(call);
      const bin = findPgBin()!;
      const dump = await new Deno.Command(`${bin}/pg_dump`, {
        args: ["--format=custom", `--file=${file}`, from.url],
      }).output();
      assert.equal(dump.code, 0, new TextDecoder().decode(dump.stderr));
      assert.equal((await source.stop()).code, 0);
      const restore = await new Deno.Command(`${bin}/pg_restore`, {
        args: ["--no-owner", `--dbname=${into.url}`, file],
      }).output();
      assert.equal(restore.code, 0, new TextDecoder().decode(restore.stderr));

      const copy = await startServer({
        DATA_DIR: dataDir,
        DATABASE_URL: into.url,
        SERVICE_API_KEY: KEY,
        RUNNER: "off",
      });
      servers.push(copy);
      assertSameAsOf(await view(client(copy)), original, upTo);
    } finally {
      for (const server of servers) await server.stop();
      await from.drop();
      await into.drop();
      await target.close();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
