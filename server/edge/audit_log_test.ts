// The audit log through the real interface, on each database: an entry for every mutation of
// the router (a new mutation without a step here fails), secrets masked; refused writes leave
// none; a change and its entry commit together; paging and filters; retention; backups.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createApp } from "../app.ts";
import { dumpBackup } from "../operations/backup/dump.ts";
import { readBackup } from "../operations/backup/format.ts";
import { restoreBackup } from "../operations/backup/restore.ts";
import { createLogger } from "../base/log.ts";
import { pruneOnce } from "../runner/prune.ts";
import { emptyDatabase } from "../testing/backups.ts";
import {
  type Answer,
  apiSuite,
  backends,
  BASE,
  freshDatabase,
  TEST_API_KEY,
  type TestClient,
  uniqueName,
} from "../testing/app.ts";
import { startTarget } from "../testing/target_server.ts";
import { AUDIT_RULES } from "../procedures/audit_rules.ts";
import { operationsOf } from "../procedures/operations_build.ts";
import { appRouter } from "../procedures/router.ts";

const AGENT = { "user-agent": "audit-test/1.0" };
const DAY_MS = 86_400_000;
const SIGNING_KEY = `whsec_${btoa("s3cr3t-signing-key-0123456789abc")}`;

// deno-lint-ignore no-explicit-any
type Json = any;

/** The entries newer than `id` (all when null), oldest first. */
async function entriesAfter(api: TestClient, id: string | null): Promise<Json[]> {
  const answer = await api.get("/api/v1/audit-log?limit=50");
  assert.equal(answer.status, 200, answer.text);
  const newer = answer.body.data.filter((e: Json) => id === null || BigInt(e.id) > BigInt(id));
  return newer.reverse();
}

async function newestId(api: TestClient): Promise<string | null> {
  const answer = await api.get("/api/v1/audit-log?limit=1");
  assert.equal(answer.status, 200, answer.text);
  return answer.body.data[0]?.id ?? null;
}

/** The fixtures the steps make and read as they go. */
interface Made {
  project: string;
  target: { origin: string; setHealth(status: number, body: unknown): void };
  probe?: string;
  probe2?: string;
  incident?: string;
  window?: string;
  targetName: string;
  badge?: string;
  location: string;
  keyName: string;
  /** Secrets answered once (keys, tokens) or sent (header, URL parts): never in an entry. */
  secrets: string[];
}

type Step = (api: TestClient, d: Made) => Promise<Answer>;

const post = (api: TestClient, path: string, body?: unknown) =>
  api.post(`/api/v1${path}`, body, { headers: AGENT });
const patch = (api: TestClient, path: string, body: unknown) =>
  api.patch(`/api/v1${path}`, body, { headers: AGENT });
const del = (api: TestClient, path: string) => api.delete(`/api/v1${path}`, { headers: AGENT });

/** One call of each mutation, in an order where each finds what the ones before it made. */
const STEPS: [string, Step][] = [
  ["projects.create", (api, d) => post(api, "/projects", { project: d.project })],
  ["projects.update", (api, d) => patch(api, `/projects/${d.project}`, { label: "Shop" })],
  ["probes.create", async (api, d) => {
    const answer = await post(api, `/projects/${d.project}/probes`, {
      url: `${d.target.origin}/health?token=s3cr3t-query`,
      headers: { authorization: "Bearer s3cr3t-header" },
    });
    d.probe = answer.body.data.probe_id;
    return answer;
  }],
  ["probes.createWithProject", async (api, d) => {
    const answer = await post(api, "/probes", { project: d.project, url: `${d.target.origin}/b` });
    d.probe2 = answer.body.data.probe_id;
    return answer;
  }],
  [
    "probes.update",
    (api, d) => patch(api, `/projects/${d.project}/probes/${d.probe2}`, { label: "Second" }),
  ],
  [
    "alerts.updateProject",
    (api, d) => patch(api, `/projects/${d.project}/alerts`, { failure_threshold: 1 }),
  ],
  ["probes.run", (api, d) => {
    d.target.setHealth(503, { status: "DOWN" });
    return post(api, `/projects/${d.project}/probes/${d.probe}/run`);
  }],
  ["incidents.acknowledge", async (api, d) => {
    const open = await api.get(`/api/v1/incidents?project=${d.project}&state=open`);
    d.incident = open.body.data[0].id;
    return post(api, `/incidents/${d.incident}/acknowledge`);
  }],
  ["settings.updateIamAlive", (api) => patch(api, "/settings/iam-alive", { interval_hours: 12 })],
  ["settings.testIamAlive", (api) => post(api, "/settings/iam-alive/test")],
  ["alerts.update", (api) => patch(api, "/settings/alerts", { failure_threshold: 3 })],
  ["maintenance.create", async (api, d) => {
    const answer = await post(api, `/projects/${d.project}/maintenance`, {
      starts_at: "2031-01-01T00:00:00Z",
      ends_at: "2031-01-02T00:00:00Z",
      reason: "move",
    });
    d.window = answer.body.data.id;
    return answer;
  }],
  ["maintenance.delete", (api, d) => del(api, `/projects/${d.project}/maintenance/${d.window}`)],
  ["targets.create", async (api, d) => {
    const answer = await post(api, "/notification-targets", {
      name: d.targetName,
      kind: "webhook",
      url: "https://hooks.example.com/s3cr3t-path",
    });
    d.secrets.push(answer.body.data.secret);
    return answer;
  }],
  ["targets.update", (api, d) =>
    patch(api, `/notification-targets/${d.targetName}`, {
      url: "https://hooks.example.com/s3cr3t-path-2",
      secret: SIGNING_KEY,
    })],
  ["targets.test", (api) => post(api, "/notification-targets/log/test")],
  ["targets.delete", (api, d) => del(api, `/notification-targets/${d.targetName}`)],
  [
    "statusPages.update",
    (api, d) => patch(api, `/projects/${d.project}/status-page`, { public: true, title: "Shop" }),
  ],
  ["badges.create", async (api, d) => {
    const answer = await post(api, `/projects/${d.project}/badges`, {});
    d.badge = answer.body.data.id;
    d.secrets.push(answer.body.data.token);
    return answer;
  }],
  ["badges.rotate", async (api, d) => {
    const answer = await post(api, `/projects/${d.project}/badges/${d.badge}/rotate`);
    d.secrets.push(answer.body.data.token);
    return answer;
  }],
  ["badges.delete", (api, d) => del(api, `/projects/${d.project}/badges/${d.badge}`)],
  ["locations.create", async (api, d) => {
    const answer = await post(api, "/locations", { name: d.location });
    d.secrets.push(answer.body.data.token);
    return answer;
  }],
  ["locations.update", (api, d) => patch(api, `/locations/${d.location}`, { label: "Office" })],
  ["locations.rotateToken", async (api, d) => {
    const answer = await post(api, `/locations/${d.location}/token`);
    d.secrets.push(answer.body.data.token);
    return answer;
  }],
  ["locations.delete", (api, d) => del(api, `/locations/${d.location}`)],
  ["heartbeats.create", async (api, d) => {
    const answer = await post(api, `/projects/${d.project}/heartbeats`, {
      name: "nightly",
      period_seconds: 3600,
    });
    d.secrets.push(new URL(answer.body.data.ping_url).pathname.split("/").at(-1)!);
    return answer;
  }],
  [
    "heartbeats.update",
    (api, d) => patch(api, `/projects/${d.project}/heartbeats/nightly`, { grace_seconds: 120 }),
  ],
  ["heartbeats.delete", (api, d) => del(api, `/projects/${d.project}/heartbeats/nightly`)],
  ["apiKeys.create", async (api, d) => {
    const answer = await post(api, "/api-keys", { name: d.keyName, role: "viewer" });
    d.secrets.push(answer.body.data.key);
    return answer;
  }],
  ["apiKeys.update", (api, d) => patch(api, `/api-keys/${d.keyName}`, { role: "editor" })],
  ["apiKeys.rotate", async (api, d) => {
    const answer = await post(api, `/api-keys/${d.keyName}/rotate`);
    d.secrets.push(answer.body.data.key);
    return answer;
  }],
  ["apiKeys.delete", (api, d) => del(api, `/api-keys/${d.keyName}`)],
  ["sessions.delete", async (api, d) => {
    const signIn = await api.post("/auth/sign-in", { api_key: TEST_API_KEY }, {
      key: null,
      headers: { origin: BASE },
    });
    assert.equal(signIn.status, 200, signIn.text);
    d.secrets.push(signIn.headers.get("set-cookie")!.split(";")[0].split("=")[1]);
    const [session] = (await api.get("/api/v1/sessions")).body.data;
    return del(api, `/sessions/${session.id}`);
  }],
  ["probes.delete", (api, d) => del(api, `/projects/${d.project}/probes/${d.probe2}`)],
  ["projects.delete", (api, d) => del(api, `/projects/${d.project}`)],
];

/** The router's mutations anyone makes: the runner protocol's are its runners reporting. */
const MUTATIONS = operationsOf(appRouter)
  .filter((o) => o.type === "mutation" && o.procedure[0] !== "runner")
  .map((o) => o.procedure.join("."));

Deno.test("every mutation of the router has an audit rule and a step in this test", () => {
  const stepped = STEPS.map(([path]) => path);
  for (const path of MUTATIONS) {
    assert.ok(AUDIT_RULES[path], `${path} has no audit rule (server/procedures/audit_rules.ts)`);
    assert.ok(stepped.includes(path), `${path} has no step in audit_log_test.ts`);
  }
  assert.deepEqual([...stepped].sort(), [...MUTATIONS].sort());
});

apiSuite("audit log", (test) => {
  test("every change leaves one entry: who, from where, what, the change, secrets masked", async ({ api }) => {
    const target = await startTarget();
    try {
      const d: Made = {
        project: uniqueName(),
        target,
        targetName: uniqueName("t"),
        location: uniqueName("l"),
        keyName: uniqueName("k"),
        secrets: ["s3cr3t-header", "s3cr3t-query", "s3cr3t-path", SIGNING_KEY],
      };
      const seen: Record<string, Json> = {};
      for (const [path, step] of STEPS) {
        const last = await newestId(api);
        const answer = await step(api, d);
        assert.ok(answer.status >= 200 && answer.status < 300, `${path}: ${answer.text}`);
        const entries = await entriesAfter(api, last);
        assert.deepEqual(entries.map((e) => e.operation), [path], `${path}: one entry`);
        const [entry] = entries;
        assert.equal(entry.resource.type, AUDIT_RULES[path].type, path);
        assert.equal(entry.actor, "SERVICE_API_KEY", path);
        assert.equal(entry.actor_source, "configured_key", path);
        assert.equal(entry.user_agent, AGENT["user-agent"], path);
        assert.match(entry.request_id, /^[0-9a-z]+-[0-9a-z]+$/, path);
        assert.ok(entry.address, path);
        const text = JSON.stringify(entry);
        for (const secret of d.secrets) assert.ok(!text.includes(secret), `${path}: ${secret}`);
        seen[path] = entry;
      }
      // What each kind of change holds.
      assert.deepEqual(seen["projects.create"].resource, { type: "project", id: d.project });
      assert.equal(seen["projects.create"].before, null);
      assert.equal(seen["projects.create"].after.project, d.project);
      assert.deepEqual(
        [seen["projects.update"].before, seen["projects.update"].after],
        [{ label: null }, { label: "Shop" }],
      );
      const probe = seen["probes.create"].after;
      assert.deepEqual(probe.headers, { authorization: "<redacted>" });
      assert.equal(probe.url, `${d.target.origin}/health?token=****`);
      assert.deepEqual(seen["probes.update"].after, { label: "Second" });
      assert.equal(seen["probes.run"].resource.id, `${d.project}/${d.probe}`);
      assert.deepEqual(seen["incidents.acknowledge"].before.acknowledged_at, null);
      assert.notEqual(seen["incidents.acknowledge"].after.acknowledged_at, null);
      assert.deepEqual(seen["settings.updateIamAlive"].resource, {
        type: "settings",
        id: "iam-alive",
      });
      assert.equal(seen["settings.updateIamAlive"].after.interval_hours, 12);
      assert.equal(seen["maintenance.delete"].before.reason, "move");
      assert.equal(seen["targets.create"].after.url, "https://hooks.example.com/…");
      // The secret written is told changed, never shown.
      assert.equal(seen["targets.update"].after.secret, "<changed>");
      assert.deepEqual(seen["badges.rotate"].after, { token: "<changed>", ...rotatedAt(seen) });
      assert.equal(seen["locations.rotateToken"].after.token, "<changed>");
      assert.deepEqual(seen["apiKeys.update"].after, { role: "editor" });
      assert.equal(seen["apiKeys.rotate"].after.key, "<changed>");
      assert.equal(seen["projects.delete"].after, null);
      assert.equal(seen["projects.delete"].before.label, "Shop");
    } finally {
      await target.close();
    }
  });

  test("changes through /trpc, its fast path and a batch are logged alike", async ({ api }) => {
    const fast = uniqueName();
    const batched = uniqueName();
    const last = await newestId(api);
    const one = await api.post("/trpc/projects.create", { project: fast }, { headers: AGENT });
    assert.equal(one.status, 200, one.text);
    const batch = await api.post(
      "/trpc/projects.create?batch=1",
      { 0: { project: batched } },
      { headers: AGENT },
    );
    assert.equal(batch.status, 200, batch.text);
    const entries = await entriesAfter(api, last);
    assert.deepEqual(entries.map((e) => [e.operation, e.resource.id, e.user_agent]), [
      ["projects.create", fast, AGENT["user-agent"]],
      ["projects.create", batched, AGENT["user-agent"]],
    ]);
  });

  test("refused writes (401, 403, 404, 409, 422) leave no entry", async ({ api }) => {
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const viewer = await api.post("/api/v1/api-keys", { name: uniqueName("k"), role: "viewer" });
    assert.equal(viewer.status, 201, viewer.text);
    const last = await newestId(api);
    const refusals: [number, Promise<Answer>][] = [
      [401, api.patch(`/api/v1/projects/${project}`, { label: "x" }, { key: null })],
      [401, api.patch(`/api/v1/projects/${project}`, { label: "x" }, { key: "wrong-key-000000" })],
      [
        403,
        api.patch(`/api/v1/projects/${project}`, { label: "x" }, { key: viewer.body.data.key }),
      ],
      [404, api.patch(`/api/v1/projects/${uniqueName()}`, { label: "x" })],
      [409, api.post("/api/v1/projects", { project })],
      [422, api.patch(`/api/v1/projects/${project}`, {})],
      [422, api.post("/api/v1/projects", { project: "" })],
      // A name no string can stand for: refused by validation, before the audit step reads it.
      [422, api.post("/api/v1/notification-targets", { name: { toString: 1 }, type: "log" })],
      [404, api.delete(`/api/v1/projects/${project}/probes/nope`)],
    ];
    for (const [status, call] of refusals) assert.equal((await call).status, status);
    assert.deepEqual(await entriesAfter(api, last), []);
    // The viewer's own read of the log is refused too (admin only).
    const read = await api.get("/api/v1/audit-log", { key: viewer.body.data.key });
    assert.equal(read.status, 403);
    assert.equal(read.body.error.code, "forbidden");
  });

  test("a change and its entry commit together: a failure at the commit rolls both back", async ({ app, api }) => {
    const db = app.database.db;
    const doomed = `${uniqueName("doomed")}`;
    // A check run at the commit, after the entry is written, failing for this one project.
    await sql`create or replace function audit_test_refuse() returns trigger language plpgsql as $$
      begin
        if new.resource_id like 'doomed-%' then raise exception 'refused at commit'; end if;
        return new;
      end $$`.execute(db);
    await sql`create constraint trigger audit_test_refuse after insert on audit_log
      deferrable initially deferred for each row execute function audit_test_refuse()`
      .execute(db);
    try {
      const last = await newestId(api);
      const answer = await api.post("/api/v1/projects", { project: doomed });
      assert.equal(answer.status, 500, answer.text);
      assert.equal((await api.get(`/api/v1/projects/${doomed}`)).status, 404);
      assert.deepEqual(await entriesAfter(api, last), []);
      // Others commit as ever.
      const kept = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project: kept })).status, 201);
      assert.deepEqual((await entriesAfter(api, last)).map((e) => e.resource.id), [kept]);
    } finally {
      await sql`drop trigger audit_test_refuse on audit_log`.execute(db);
    }
  });

  test("the log is read newest first, filtered and paged", async ({ api }) => {
    const started = new Date().toISOString();
    const names = [uniqueName(), uniqueName(), uniqueName()];
    for (const project of names) {
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      assert.equal((await api.patch(`/api/v1/projects/${project}`, { label: "L" })).status, 200);
    }
    const one = await api.get(`/api/v1/audit-log?resource=project:${names[1]}`);
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body.data.map((e: Json) => e.operation), [
      "projects.update",
      "projects.create",
    ]);
    assert.deepEqual(one.body.meta, { count: 2, next_after: null });
    // Paged: two at a time, newest first, each page continuing the last.
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const query: string = `since=${encodeURIComponent(started)}&resource=project&limit=2` +
        (after ? `&after=${after}` : "");
      const page = await api.get(`/api/v1/audit-log?${query}`);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.data.length <= 2);
      seen.push(...page.body.data.map((e: Json) => e.id));
      after = page.body.meta.next_after;
    } while (after !== null);
    assert.ok(seen.length >= 6);
    assert.deepEqual(seen, [...seen].sort((a, b) => Number(BigInt(b) - BigInt(a))));
    // By actor, and by time.
    const mine = await api.get(`/api/v1/audit-log?actor=SERVICE_API_KEY&limit=1`);
    assert.equal(mine.body.data[0].resource.id, names[2]);
    const nobody = await api.get(`/api/v1/audit-log?actor=nobody`);
    assert.deepEqual(nobody.body.data, []);
    const before = await api.get(
      `/api/v1/audit-log?resource=project:${names[0]}&before=${encodeURIComponent(started)}`,
    );
    assert.deepEqual(before.body.data, []);
    // Bad input is a 422 naming the field.
    for (const query of ["since=yesterday", "limit=0", "after=not-a-cursor"]) {
      const bad = await api.get(`/api/v1/audit-log?${query}`);
      assert.equal(bad.status, 422, query);
      assert.equal(bad.body.error.details[0].path, query.split("=")[0]);
    }
    // Nothing of the interface changes or deletes an entry.
    for (const method of ["POST", "PATCH", "DELETE", "PUT"]) {
      assert.equal((await api.call(method, "/api/v1/audit-log")).status, 404, method);
    }
  });

  test("entries past AUDIT_RETENTION_DAYS are pruned with the runner's history", async ({ app, api }) => {
    const [old, recent] = [uniqueName(), uniqueName()];
    for (const project of [old, recent]) {
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    }
    const db = app.database.db;
    const now = Date.now();
    const backdate = (project: string, days: number) =>
      sql`update audit_log set at = ${new Date(now - days * DAY_MS).toISOString()}
          where resource_id = ${project}`.execute(db);
    await backdate(old, 31);
    await backdate(recent, 29);
    const report = await pruneOnce(db, { now, retentionDays: 7, auditRetentionDays: 30 });
    assert.ok(report.audit >= 1);
    const left = async (project: string) =>
      (await api.get(`/api/v1/audit-log?resource=project:${project}`)).body.data.length;
    assert.equal(await left(old), 0);
    assert.equal(await left(recent), 1);
    // By default entries are kept 400 days.
    await backdate(recent, 399);
    await pruneOnce(db, { now, retentionDays: 7 });
    assert.equal(await left(recent), 1);
  });
});

for (const backend of backends()) {
  Deno.test(`a backup keeps the audit log, and its restore is logged as the operator [${backend}]`, async () => {
    const source = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
    });
    const into = await emptyDatabase(backend);
    let restored;
    try {
      const project = uniqueName();
      const call = (method: string, path: string, body?: unknown) =>
        source.handler(
          new Request(`${BASE}/api/v1${path}`, {
            method,
            headers: { "x-service-api-key": TEST_API_KEY, "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
          }),
        );
      assert.equal((await call("POST", "/projects", { project })).status, 201);
      assert.equal((await call("PATCH", `/projects/${project}`, { label: "L" })).status, 200);
      const read = async (handler: (r: Request) => Promise<Response>) =>
        (await (await handler(
          new Request(`${BASE}/api/v1/audit-log`, {
            headers: { "x-service-api-key": TEST_API_KEY },
          }),
        )).json()).data;
      const before = await read(source.handler);

      const summary = await restoreBackup({
        db: into.db,
        backup: readBackup(dumpBackup({ db: source.database.db, kind: source.database.kind })),
        operator: "operator (deno task restore)",
      });
      assert.equal(summary.rows.audit_log, before.length);
      restored = await createApp({
        database: into,
        apiKeys: [TEST_API_KEY],
        log: createLogger("silent"),
      });
      const after = await read(restored.handler);
      const [restore, ...kept] = after;
      assert.deepEqual(kept, before);
      assert.equal(restore.operation, "backup.restore");
      assert.equal(restore.actor, "operator (deno task restore)");
      assert.equal(restore.actor_source, "operator");
      assert.equal(restore.after.rows.audit_log, before.length);
      assert.ok(BigInt(restore.id) > BigInt(before[0].id));
    } finally {
      await source.close();
      if (restored) await restored.close();
      else await into.close();
    }
  });
}

/** The badge's rotation time, as its read after the rotation shows it. */
function rotatedAt(seen: Record<string, Json>) {
  const after = seen["badges.rotate"].after;
  return after.rotated_at === undefined ? {} : { rotated_at: after.rotated_at };
}
