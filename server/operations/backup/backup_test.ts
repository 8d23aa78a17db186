// Backups in-process, on each database: GET /backup through the real handler, restored into an
// empty database, read back through the API; and what a restore refuses.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type App, createApp } from "../../app.ts";
import type { DatabaseHandle } from "../../storage/database.ts";
import { createLogger } from "../../base/log.ts";
import { executeProbe } from "../../runner/execute.ts";
import {
  backends,
  BASE,
  freshDatabase,
  LOOPBACK_ONLY,
  TEST_API_KEY,
  TEST_READ_KEY,
  TestClient,
  uniqueName,
} from "../../testing/app.ts";
import { emptyDatabase, pieces } from "../../testing/backups.ts";
import { runDueProbesOnce } from "../../testing/runs.ts";
import { startTarget } from "../../testing/target_server.ts";
import { dumpBackup } from "./dump.ts";
import { BackupError, readBackup } from "./format.ts";
import { assertEmptyDatabase, restoreBackup } from "./restore.ts";

const SLACK_URL = "https://hooks.slack.com/services/T000/B000/backupsecret";

function appOver(database: DatabaseHandle): Promise<App> {
  return createApp({
    database,
    apiKeys: [TEST_API_KEY],
    config: { readOnlyApiKeys: [TEST_READ_KEY] },
    log: createLogger("silent"),
    runProbe: (target) => executeProbe(target, { policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
  });
}

/** A backup's lines, parsed. */
const lines0 = (text: string) => text.trimEnd().split("\n").map((l) => JSON.parse(l));

async function backupOf(app: App, key = TEST_API_KEY) {
  return await app.handler(
    new Request(`${BASE}/backup`, { headers: { "x-service-api-key": key } }),
  );
}

/** What the API shows of the data: every read that a restore must give back the same. */
async function apiView(api: TestClient, projects: string[]) {
  const get = async (path: string) => {
    const res = await api.get(path);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    return res.body.data;
  };
  const view: Record<string, unknown> = {
    targets: await get("/api/v1/notification-targets"),
    alerts: await get("/api/v1/settings/alerts"),
    iamAlive: await get("/api/v1/settings/iam-alive"),
  };
  for (const project of projects) {
    view[project] = await get(`/api/v1/projects/${project}`);
    const probes = await get(`/api/v1/projects/${project}/probes`);
    view[`${project}/probes`] = probes;
    view[`${project}/maintenance`] = await get(`/api/v1/projects/${project}/maintenance`);
    view[`${project}/status-page`] = await get(`/api/v1/projects/${project}/status-page`);
    view[`${project}/badges`] = await get(`/api/v1/projects/${project}/badges`);
    for (const probe of probes as { probe_id: string }[]) {
      const path = `/api/v1/projects/${project}/probes/${probe.probe_id}`;
      view[`${path}/results`] = await get(`${path}/results`);
    }
  }
  return view;
}

for (const backend of backends()) {
  Deno.test(`a backup from GET /backup restores into an empty database with the same data [${backend}]`, async () => {
    const target = await startTarget();
    const source = await appOver(await freshDatabase(backend));
    const restoredHandle = await emptyDatabase(backend);
    let restored: App | undefined;
    try {
      const api = new TestClient(source.handler);
      const projects = [uniqueName("backup"), uniqueName("backup")];
      for (const project of projects) {
        const made = await api.post("/api/v1/projects", { project, label: 'Shop\'s "front"' });
        assert.equal(made.status, 201, made.text);
      }
      const [shop, other] = projects;
      for (const path of ["/ok", "/status/503", "/slow?ms=5"]) {
        const made = await api.post(`/api/v1/projects/${shop}/probes`, {
          url: `${target.origin}${path}`,
          headers: { "x-Trace": 'a "b"\tc' },
          label: `caf\u00e9 \u{1F600} ${path}`,
          body: { nested: [1, 2.5, "x"], empty: {} },
        });
        assert.equal(made.status, 201, made.text);
      }
      // A remote location, with its token's digest only, and a probe that runs from it.
      const location = await api.post("/api/v1/locations", { name: uniqueName("loc") });
      assert.equal(location.status, 201, location.text);
      const token = location.body.data.token as string;
      // A probe's own schedule is dumped and restored with it (the view reads it back).
      await api.post(`/api/v1/projects/${other}/probes`, {
        url: `${target.origin}/ok`,
        interval_seconds: 15,
        timeout_ms: 1_500,
        locations: ["local", location.body.data.name],
      });
      const slack = await api.post("/api/v1/notification-targets", {
        name: uniqueName("slack"),
        kind: "slack",
        url: SLACK_URL,
      });
      assert.equal(slack.status, 201, slack.text);
      assert.equal(
        (await api.patch("/api/v1/settings/alerts", { failure_threshold: 5 })).status,
        200,
      );
      const window = await api.post(`/api/v1/projects/${shop}/maintenance`, {
        starts_at: new Date(Date.now() + 3_600_000).toISOString(),
        ends_at: new Date(Date.now() + 7_200_000).toISOString(),
        reason: "upgrade",
      });
      assert.equal(window.status, 201, window.text);
      assert.equal(
        (await api.patch(`/api/v1/projects/${shop}/status-page`, { public: true }))
          .status,
        200,
      );
      assert.equal((await api.post(`/api/v1/projects/${shop}/badges`, {})).status, 201);
      await runDueProbesOnce(source.database.db);
      // More results than one page holds, with keys that sort otherwise as text (9 < 10 < 100).
      await sql`insert into probe_results
          (probe_key, due_at, started_at, duration_ms, outcome, http_status, runner)
        select p.key, now() - g * interval '1 minute', now() - g * interval '1 minute', g % 97,
               'up', 200, 'older-runner'
        from generate_series(1, 1200) g cross join (select min(key) as key from probes) p`
        .execute(source.database.db);
      const stored = await sql<{ n: number }>`select count(*)::int as n from probe_results`
        .execute(source.database.db);

      // Only a key that may write: a backup holds the Slack URL.
      assert.equal((await backupOf(source, "wrong-key")).status, 401);
      const forbidden = await backupOf(source, TEST_READ_KEY);
      assert.equal(forbidden.status, 403);
      assert.equal((await forbidden.json()).error.code, "forbidden");
      const posted = await source.handler(
        new Request(`${BASE}/backup`, {
          method: "POST",
          headers: { "x-service-api-key": TEST_API_KEY },
        }),
      );
      assert.equal(posted.status, 405);
      assert.equal(posted.headers.get("allow"), "GET");
      assert.equal((await posted.json()).error.code, "method_not_allowed");

      const response = await backupOf(source);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("transfer-encoding"), "chunked");
      const text = await response.text();
      assert.ok(text.includes(SLACK_URL), "the backup holds the target's secret");
      assert.ok(lines0(text).some((l) => l.table === "locations"), "locations are backed up");
      assert.ok(!text.includes(token), "never a location's token, only its digest");
      const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
      assert.equal(lines[0].format, "probe-backup");
      assert.equal(lines[0].database, backend);
      assert.equal(lines.at(-1).end.rows.probe_results, stored.rows[0].n);
      const rowsAfter = lines.slice(lines.findIndex((l) => l.table === "probe_results") + 1);
      const held = rowsAfter.findIndex((l) => !Array.isArray(l));
      assert.equal(held, stored.rows[0].n, "the rows of probe_results in the backup");
      assert.deepEqual(
        rowsAfter.slice(0, held).map((row) => Number(row[0])),
        [...Array(held).keys()].map((i) => i + 1),
        "in key order",
      );

      const summary = await restoreBackup({
        db: restoredHandle.db,
        backup: readBackup(pieces(text)),
      });
      assert.equal(summary.schema, lines[0].schema);
      assert.deepEqual(summary.rows, lines.at(-1).end.rows);
      restored = await appOver(restoredHandle);
      const again = new TestClient(restored.handler);
      assert.deepEqual(await apiView(again, projects), await apiView(api, projects));

      // Table for table and row for row the same: a backup of the restored database is the
      // same text but for its header.
      const second = await (await backupOf(restored)).text();
      assert.equal(second.slice(second.indexOf("\n")), text.slice(text.indexOf("\n")));

      // The location's runners keep their token across the restore.
      const claim = await again.post(
        "/api/v1/runner/claim",
        { runner: "r", version: "1", wait_seconds: 0 },
        { key: token },
      );
      assert.equal(claim.status, 200, claim.text);
      // New rows get new keys: the sequences went on from where they were.
      const added = await again.post(`/api/v1/projects/${other}/probes`, {
        url: `${target.origin}/status/200`,
      });
      assert.equal(added.status, 201, added.text);
    } finally {
      await restored?.close();
      if (!restored) await restoredHandle.close();
      await source.close();
      await target.close();
    }
  });

  Deno.test(`a restore refuses a database with tables, and leaves nothing of a backup cut short [${backend}]`, async () => {
    const source = await freshDatabase(backend);
    const empty = await emptyDatabase(backend);
    try {
      let text = "";
      for await (const chunk of dumpBackup({ db: source.db, kind: backend })) text += chunk;

      await assert.rejects(
        restoreBackup({ db: source.db, backup: readBackup(pieces(text)) }),
        (error: Error) => error instanceof BackupError && /not empty/.test(error.message),
      );
      const cut = text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1);
      await assert.rejects(
        restoreBackup({ db: empty.db, backup: readBackup(pieces(cut)) }),
        (error: Error) => error instanceof BackupError && /incomplete/.test(error.message),
      );
      await assertEmptyDatabase(empty.db); // rolled back: nothing left, not even the schema

      const newer = text.replace(
        /"schema":"[^"]*"/,
        '"schema":"2099_01_01_000000_from_the_future"',
      );
      await assert.rejects(
        restoreBackup({ db: empty.db, backup: readBackup(pieces(newer)) }),
        /not one this version of the service knows/,
      );
      await assert.rejects(
        restoreBackup({ db: empty.db, backup: readBackup(pieces('{"hello":1}\n')) }),
        /not a backup of this service/,
      );
      // A restore that fails half-way through a live dump ends the dump's transaction, which
      // on the embedded database every other query would wait for.
      const spoilt = async function* () {
        let rows = 0;
        for await (const value of readBackup(dumpBackup({ db: source.db, kind: backend }))) {
          yield Array.isArray(value) && ++rows === 2 ? [...value, "one too many"] : value;
        }
      };
      await assert.rejects(
        restoreBackup({ db: empty.db, backup: spoilt() }),
        /values for \d+ columns/,
      );
      await sql`select 1`.execute(source.db);
      await assertEmptyDatabase(empty.db);

      // The whole text again restores.
      const summary = await restoreBackup({ db: empty.db, backup: readBackup(pieces(text)) });
      assert.equal(summary.rows.alert_settings, 1);
    } finally {
      await empty.close();
      await source.close();
    }
  });
}
