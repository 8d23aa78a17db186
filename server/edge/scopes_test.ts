// Project scopes: a principal limited to some projects, checked against every operation of the
// served document on REST and on /trpc. A project it does not see answers what a project that
// does not exist answers, byte for byte, and is left unchanged; the lists, the overview and the
// incidents hold its projects only; what every project shares it may read, never change; every
// operation on a project it sees works. An operation this table does not know fails the test.
// The keys are stored keys made through the API (`POST /api-keys` with `projects`).
import assert from "node:assert/strict";
import { REDACTED } from "@probe/shared";
import { backends, startTestApp, TEST_API_KEY, TestClient, uniqueName } from "../testing/app.ts";
import {
  changingBody,
  comparable as seen,
  type DocumentOperation,
  operationsOf,
} from "../testing/document.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** What every stored secret holds, so that one search finds any in an answer. */
const SECRET = "s3cr3t";

const body = (op: string, project: string) =>
  changingBody(op, project, (prefix) => uniqueName(`sc-${prefix}`));
/**
 * What a scoped principal gets from each operation that names no project in its path: `refused`
 * (403 `forbidden`), `shared` (what every project shares: read as the admin reads it, changes
 * refused), `runner` (the runner protocol: a location token's alone), or a check of its own.
 */
const GLOBAL: Record<
  string,
  "refused" | "shared" | "runner" | "lists" | "incident" | "own" | "free"
> = {
  "POST /projects": "refused",
  "GET /projects": "lists",
  "POST /probes": "lists",
  "GET /probes": "lists",
  "GET /settings/iam-alive": "refused",
  "PATCH /settings/iam-alive": "refused",
  "POST /settings/iam-alive/test": "refused",
  "GET /settings/iam-alive/deliveries": "refused",
  "GET /incidents": "lists",
  "GET /incidents/{id}": "incident",
  "POST /incidents/{id}/acknowledge": "incident",
  "GET /settings/alerts": "shared",
  "PATCH /settings/alerts": "shared",
  "GET /notification-target-kinds": "shared",
  "POST /notification-targets": "shared",
  "GET /notification-targets": "shared",
  "GET /notification-targets/{name}": "shared",
  "PATCH /notification-targets/{name}": "shared",
  "DELETE /notification-targets/{name}": "shared",
  "POST /notification-targets/{name}/test": "shared",
  "GET /overview": "lists",
  "GET /locations": "shared",
  "POST /locations": "shared",
  "GET /locations/{location}": "shared",
  "PATCH /locations/{location}": "shared",
  "DELETE /locations/{location}": "shared",
  "POST /locations/{location}/token": "shared",
  "POST /runner/claim": "runner",
  "POST /runner/results": "runner",
  "GET /whoami": "free",
  "GET /api-keys": "refused",
  "POST /api-keys": "refused",
  "GET /api-keys/{name}": "refused",
  "PATCH /api-keys/{name}": "refused",
  "DELETE /api-keys/{name}": "refused",
  "POST /api-keys/{name}/rotate": "refused",
  "GET /audit-log": "refused",
  "GET /sessions": "own",
  "DELETE /sessions/{id}": "own",
};

/** What one project holds for the operations to reach, made with the admin key. */
async function furnish(api: TestClient, db: Json, project: string) {
  const made = async (path: string, body: Json) => {
    const answer = await api.post(`/api/v1${path}`, body);
    assert.ok(answer.status < 300, `${path}: ${answer.text}`);
    return answer.body.data;
  };
  await made("/projects", { project });
  const probe = await made(`/projects/${project}/probes`, { url: "http://127.0.0.1:9/" });
  await made(`/projects/${project}/heartbeats`, { name: "hb", period_seconds: 3600 });
  const window = await made(`/projects/${project}/maintenance`, {
    starts_at: "2031-01-01T00:00:00Z",
    ends_at: "2031-01-02T00:00:00Z",
  });
  const badge = await made(`/projects/${project}/badges`, {});
  const { key } = await db.selectFrom("probes").select("key")
    .where("project", "=", project).where("probe_id", "=", probe.probe_id)
    .executeTakeFirstOrThrow();
  const incident = await db.insertInto("incidents").values({
    project,
    probe_key: key,
    probe_id: probe.probe_id,
    label: "a probe",
    started_at: new Date(),
    cause: "HTTP 500",
    runs_failed: 3,
  }).returning("id").executeTakeFirstOrThrow();
  return {
    probeId: probe.probe_id as string,
    window: String(window.id),
    badge: String(badge.id),
    incident: String(incident.id),
  };
}

for (const backend of backends()) {
  Deno.test(`a project-scoped key sees its projects alone [${backend}]`, async (t) => {
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    const db = app.database.db;
    const [mine, other, missing] = [uniqueName("sc-mine"), uniqueName("sc-other"), "sc-missing"];
    try {
      const doc = (await api.get("/api/v1/openapi.json", { key: null })).body;
      const operations = operationsOf(doc);
      const target = uniqueName("sc-t");
      assert.equal(
        (await api.post("/api/v1/notification-targets", {
          name: target,
          kind: "mail",
          recipients: ["a@example.com"],
        })).status,
        201,
      );
      // A target holding secrets: every project shares it, a limited key reads it masked.
      const hook = await api.post("/api/v1/notification-targets", {
        name: uniqueName("sc-hook"),
        kind: "webhook",
        url: `http://127.0.0.1:9/hook/${SECRET}?token=${SECRET}`,
      });
      assert.equal(hook.status, 201, hook.text);
      const held = { [mine]: await furnish(api, db, mine) };
      held[other] = await furnish(api, db, other);
      // An admin key limited to one project: what it may not do is the scope's doing alone.
      const key = async (role: string) => {
        const made = await api.post("/api/v1/api-keys", {
          name: uniqueName(`sc-${role}`),
          role,
          projects: [mine],
        });
        assert.equal(made.status, 201, made.text);
        return made.body.data.key as string;
      };
      const scopedKey = await key("admin");
      const as = { key: scopedKey };
      // The missing project is named with the other's ids: nothing tells the two apart.
      held[missing] = held[other];

      const values = (template: string, project: string): Record<string, string> => ({
        project,
        probeId: held[project].probeId,
        name: template.includes("/heartbeats/") ? "hb" : target,
        id: template.includes("/maintenance/")
          ? held[project].window
          : template.includes("/badges/")
          ? held[project].badge
          : held[project].incident,
        location: "local",
      });
      const fill = (template: string, project: string) =>
        template.replace(
          /\{(.+?)\}/g,
          (_, name) => encodeURIComponent(values(template, project)[name]),
        );
      const call = (op: DocumentOperation, project: string, key = scopedKey) =>
        api.call(op.method, `/api/v1${fill(op.template, project)}`, {
          key,
          body: op.method === "DELETE" || op.method === "GET" ? undefined : body(op.op, project),
        });
      const trpc = (op: DocumentOperation, project: string) => {
        const input = {
          ...Object.fromEntries(
            [...op.template.matchAll(/\{(.+?)\}/g)].map((
              [, name],
            ) => [name, values(op.template, project)[name]]),
          ),
          ...(op.method === "GET" || op.method === "DELETE" ? {} : body(op.op, project)),
        };
        return op.method === "GET"
          ? api.get(`/trpc/${op.procedure}?input=${encodeURIComponent(JSON.stringify(input))}`, as)
          : api.post(`/trpc/${op.procedure}`, input, as);
      };

      const projectOps = operations.filter((o) => o.template.includes("{project}"));
      const otherOps = operations.filter((o) => !o.template.includes("{project}"));
      await t.step("every operation is in this test's table", () => {
        for (const o of otherOps) assert.ok(o.op in GLOBAL, `${o.op}: what does a scoped key get?`);
      });

      /** What the admin reads of the other project: what the scoped key must leave alone. */
      const otherState = async () => {
        const answers: Record<string, unknown> = {};
        for (const o of projectOps.filter((o) => o.method === "GET")) {
          answers[o.template] = seen(await call(o, other, TEST_API_KEY));
        }
        return answers;
      };
      const before = await otherState();

      await t.step("another project answers as a missing one, and stays as it was", async () => {
        for (const o of projectOps) {
          const [unseen, absent] = [await call(o, other), await call(o, missing)];
          assert.deepEqual(seen(unseen), seen(absent), o.op);
          // 404, or where a missing project's list is empty (its probes), an empty list.
          const empty = unseen.status === 200 && unseen.body.data.length === 0;
          assert.ok(unseen.status === 404 || empty, `${o.op}: ${unseen.text}`);
          const [unseenT, absentT] = [await trpc(o, other), await trpc(o, missing)];
          assert.deepEqual(seen(unseenT), seen(absentT), o.procedure);
          assert.ok(unseenT.status === 404 || empty, `${o.procedure}: ${unseenT.text}`);
        }
        assert.deepEqual(await otherState(), before);
      });

      await t.step(
        "the lists, the overview and the incidents hold its projects alone",
        async () => {
          const projects = (await api.get("/api/v1/projects", as)).body.data;
          assert.deepEqual(projects.map((p: Json) => p.project), [mine]);
          const probes = (await api.get("/api/v1/probes", as)).body.data;
          assert.deepEqual([...new Set(probes.map((p: Json) => p.project))], [mine]);
          const overview = (await api.get("/api/v1/overview", as)).body;
          assert.deepEqual(overview.data.projects.map((p: Json) => p.project), [mine]);
          assert.deepEqual(overview.data.incidents.map((i: Json) => i.project), [mine]);
          assert.equal(overview.meta.projects, 1);
          const incidents = (await api.get("/api/v1/incidents", as)).body.data;
          assert.deepEqual(incidents.map((i: Json) => i.project), [mine]);
          // The admin sees both.
          const all = (await api.get("/api/v1/incidents")).body.data.map((i: Json) => i.project);
          assert.ok(all.includes(mine) && all.includes(other));
          for (
            const path of [
              "/projects?project=",
              "/probes?project=",
              "/overview?project=",
              "/incidents?project=",
            ]
          ) {
            assert.deepEqual(
              seen(await api.get(`/api/v1${path}${other}`, as)),
              seen(await api.get(`/api/v1${path}${missing}`, as)),
              path,
            );
          }
          // A probe created in another project, by the project in the body.
          const op = otherOps.find((o) => o.op === "POST /probes")!;
          assert.deepEqual(seen(await call(op, other)), seen(await call(op, missing)));
          assert.equal((await call(op, other)).status, 404);
        },
      );

      await t.step("another project's incident answers as a missing one", async () => {
        for (const o of otherOps.filter((o) => GLOBAL[o.op] === "incident")) {
          const unseen = await api.call(o.method, `/api/v1${fill(o.template, other)}`, as);
          const absent = await api.call(
            o.method,
            `/api/v1${o.template.replace("{id}", "999999999")}`,
            as,
          );
          assert.equal(unseen.status, 404, o.op);
          assert.deepEqual(seen(unseen), seen(absent), o.op);
          const mineAnswer = await api.call(o.method, `/api/v1${fill(o.template, mine)}`, as);
          assert.equal(mineAnswer.status, 200, `${o.op}: ${mineAnswer.text}`);
        }
      });

      /** The admin's read of a location (or all) with the other project's probes uncounted. */
      const counted = (admin: { status: number; body: Json }) => {
        const minus = (l: Json) => ({ ...l, probes: l.probes - 2 });
        const data = admin.body.data;
        return {
          ...admin,
          body: { ...admin.body, data: Array.isArray(data) ? data.map(minus) : minus(data) },
        };
      };

      await t.step("what every project shares: read, never changed; the rest refused", async () => {
        for (const o of otherOps) {
          const kind = GLOBAL[o.op];
          if (kind !== "shared" && kind !== "refused" && kind !== "runner" && kind !== "own") {
            continue;
          }
          const answer = await call(o, mine);
          if (kind === "own") {
            // Its own sessions: none here, and another's is not found.
            assert.ok([200, 404].includes(answer.status), `${o.op}: ${answer.text}`);
            if (answer.status === 200) assert.deepEqual(answer.body.data, []);
            continue;
          }
          if (kind === "shared" && o.method === "GET") {
            const admin = seen(await call(o, mine, TEST_API_KEY));
            assert.ok(!answer.text.includes(SECRET), `${o.op}: ${answer.text}`);
            if (o.op === "GET /notification-targets") {
              // The admin reads the secrets as stored; this admin, limited, reads them masked.
              assert.ok(JSON.stringify(admin).includes(SECRET));
              const masked = answer.body.data.find((x: Json) => x.name === hook.body.data.name);
              assert.equal(masked.url, "http://127.0.0.1:9/…");
              continue;
            }
            // A location counts the probes (and the runs) of the projects it sees.
            assert.deepEqual(
              seen(answer),
              o.template.startsWith("/locations") ? counted(admin) : admin,
              o.op,
            );
          } else if (kind === "runner") {
            assert.equal(answer.body.error.code, "out_of_scope", o.op);
          } else {
            assert.equal(answer.status, 403, `${o.op}: ${answer.text}`);
            assert.equal(answer.body.error.code, "forbidden", o.op);
            const viaTrpc = await trpc(o, mine);
            assert.equal(viaTrpc.status, 403, o.procedure);
          }
        }
      });

      await t.step("a limited viewer reads its probes' credentials masked", async () => {
        const headers = { Authorization: `Bearer ${SECRET}`, Accept: "application/json" };
        const made = await api.post(`/api/v1/projects/${mine}/probes`, {
          url: "http://127.0.0.1:9/secret",
          headers,
        });
        assert.equal(made.status, 201, made.text);
        const path = `/api/v1/projects/${mine}/probes/${made.body.data.probe_id}`;
        const viewer = await api.get(path, { key: await key("viewer") });
        assert.deepEqual(viewer.body.data.headers, { ...headers, Authorization: REDACTED });
        assert.ok(!viewer.text.includes(SECRET));
        // Its admin reads them as stored: a definition read and written back keeps them.
        assert.deepEqual((await api.get(path, as)).body.data.headers, headers);
        // Its editor changes its project, never another.
        const editor = { key: await key("editor") };
        const label = await api.patch(`/api/v1/projects/${mine}`, { label: "Mine" }, editor);
        assert.equal(label.status, 200, label.text);
        const elsewhere = await api.patch(`/api/v1/projects/${other}`, { label: "No" }, editor);
        assert.equal(elsewhere.status, 404, elsewhere.text);
      });

      await t.step("the metrics and backups, which name every project, are refused", async () => {
        for (const path of ["/metrics", "/backup"]) {
          const refused = await api.get(path, as);
          assert.equal(refused.status, 403, `${path}: ${refused.text}`);
          assert.equal(refused.body.error.code, "forbidden");
          assert.equal((await api.get(path)).status, 200, path);
        }
      });

      await t.step("every operation on its own project works", async () => {
        // Reads answer what the admin reads; changes are made, deletions last.
        for (const o of projectOps.filter((o) => o.method === "GET")) {
          assert.deepEqual(
            seen(await call(o, mine)),
            seen(await call(o, mine, TEST_API_KEY)),
            o.op,
          );
        }
        const changes = projectOps.filter((o) => o.method !== "GET");
        const ordered = [
          ...changes.filter((o) => o.method !== "DELETE"),
          ...changes.filter((o) => o.method === "DELETE").reverse(),
        ];
        for (const o of ordered) {
          const answer = await call(o, mine);
          assert.ok(answer.status < 300, `${o.op}: ${answer.text}`);
        }
        assert.equal((await api.get(`/api/v1/projects/${mine}`, as)).status, 404);
      });
    } finally {
      await app.close();
    }
  });
}
