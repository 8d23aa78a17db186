// Read-only keys (SERVICE_API_KEYS_READONLY), checked against every operation of the served
// document: on REST and on /trpc, every query answers a read-only key what it answers a write
// key, and every other operation answers 403 `forbidden` and changes nothing.
import assert from "node:assert/strict";
import { type App, createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import { SERVICE_VERSION } from "../base/version.ts";
import { executeProbe } from "../runner/execute.ts";
import {
  backends,
  freshDatabase,
  LOOPBACK_ONLY,
  TEST_API_KEY,
  TEST_READ_KEY,
  TestClient,
  uniqueName,
} from "../testing/app.ts";
import { changingBody, comparable, operationsOf } from "../testing/document.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const bodyOf = (method: string, template: string, project: string) =>
  changingBody(`${method} ${template}`, project, (prefix) => uniqueName(`ro-${prefix}`));

async function startApp(backend: "pglite" | "postgres"): Promise<App> {
  return await createApp({
    database: await freshDatabase(backend),
    apiKeys: [TEST_API_KEY],
    config: { readOnlyApiKeys: [TEST_READ_KEY] },
    log: createLogger("silent"),
    runProbe: (target) => executeProbe(target, { policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
  });
}

const seen = comparable;

/** The reads that need an admin (docs/access.md): a read-only key is a viewer. */
const ADMIN_READS = ["/api-keys", "/audit-log"];
/**
 * The writes every caller may make on what is its own (docs/access.md): a viewer ends its own
 * sessions, so another's is one it cannot see (404) and is left alone.
 */
const OWN_WRITES = ["DELETE /sessions/{id}"];
const ownWrite = (op: { method: string; template: string }) =>
  OWN_WRITES.includes(`${op.method} ${op.template}`);

for (const backend of backends()) {
  Deno.test(`read-only keys read everything and write nothing [${backend}]`, async (t) => {
    const app = await startApp(backend);
    const api = new TestClient(app.handler);
    const read = { key: TEST_READ_KEY };
    try {
      const docAnswer = await api.get("/api/v1/openapi.json", { key: null });
      assert.equal(docAnswer.status, 200, "the document stays keyless");
      const operations = operationsOf(docAnswer.body);
      // Reads only an admin may make (the keys, the audit log) are refused like the writes.
      const adminReads = operations.filter((o) =>
        o.method === "GET" && ADMIN_READS.some((prefix) => o.template.startsWith(prefix))
      );
      const gets = operations.filter((o) => o.method === "GET" && !adminReads.includes(o));
      // The runner protocol refuses every key (`out_of_scope`, server/runner/remote_runs_test.ts).
      const writes = operations.filter((o) =>
        o.method !== "GET" && !o.template.startsWith("/runner/")
      );
      assert.ok(gets.length > 10 && writes.length > 10);

      // Something for every operation to reach, made with the write key.
      const project = uniqueName("ro");
      const target = uniqueName("ro-t");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const probe = await api.post(`/api/v1/projects/${project}/probes`, {
        url: "http://127.0.0.1:9/",
      });
      assert.equal(probe.status, 201);
      const made = await api.post("/api/v1/notification-targets", {
        name: target,
        kind: "mail",
        recipients: ["a@example.com"],
      });
      assert.equal(made.status, 201, made.text);
      const window = await api.post(`/api/v1/projects/${project}/maintenance`, {
        starts_at: "2031-01-01T00:00:00Z",
        ends_at: "2031-01-02T00:00:00Z",
      });
      assert.equal(window.status, 201, window.text);
      const badge = await api.post(`/api/v1/projects/${project}/badges`, {});
      assert.equal(badge.status, 201, badge.text);

      const values = (template: string): Record<string, string> => ({
        project,
        probeId: probe.body.data.probe_id,
        name: target,
        id: template.includes("/maintenance/")
          ? String(window.body.data.id)
          : template.includes("/badges/")
          ? String(badge.body.data.id)
          : "1",
      });
      const fill = (template: string) =>
        template.replace(/\{(.+?)\}/g, (_, name) => encodeURIComponent(values(template)[name]));
      const inputOf = (template: string) =>
        Object.fromEntries(
          [...template.matchAll(/\{(.+?)\}/g)].map(([, name]) => [name, values(template)[name]]),
        );

      /** What every GET answers the write key: the state the refused writes must leave alone. */
      const state = async () => {
        const answers: Record<string, unknown> = {};
        for (const op of gets) {
          if (op.template === "/whoami") continue;
          answers[op.template] = seen(await api.get(`/api/v1${fill(op.template)}`));
        }
        return answers;
      };
      const before = await state();

      await t.step("every GET answers a read-only key as it answers a write key", async () => {
        for (const op of gets) {
          if (op.template === "/whoami") continue;
          const path = `/api/v1${fill(op.template)}`;
          const answer = await api.get(path, read);
          assert.notEqual(answer.status, 403, `GET ${op.template}`);
          assert.deepEqual(seen(answer), before[op.template], `GET ${op.template}`);
        }
      });

      await t.step("every other operation answers 403 forbidden and changes nothing", async () => {
        for (const op of writes) {
          const path = `/api/v1${fill(op.template)}`;
          const body = op.method === "DELETE" ? undefined : bodyOf(op.method, op.template, project);
          const answer = await api.call(op.method, path, { ...read, body });
          if (ownWrite(op)) {
            assert.equal(answer.status, 404, `${op.method} ${op.template}: ${answer.text}`);
            continue;
          }
          assert.equal(answer.status, 403, `${op.method} ${op.template}: ${answer.text}`);
          assert.deepEqual(answer.body, {
            error: { code: "forbidden", message: "This key may only read" },
          });
        }
        for (const op of adminReads) {
          const answer = await api.get(`/api/v1${fill(op.template)}`, read);
          assert.equal(answer.status, 403, `GET ${op.template}: ${answer.text}`);
          assert.equal(answer.body.error.code, "forbidden");
        }
        assert.deepEqual(await state(), before);
      });

      await t.step("on /trpc: queries answer, each mutation answers 403 forbidden", async () => {
        for (const op of gets) {
          const input = encodeURIComponent(JSON.stringify(inputOf(op.template)));
          const path = `/trpc/${op.procedure}?input=${input}`;
          const [asWriter, asReader] = [await api.get(path), await api.get(path, read)];
          assert.notEqual(asReader.status, 403, op.procedure);
          assert.equal(asReader.status, asWriter.status, op.procedure);
          if (op.template !== "/whoami") assert.deepEqual(seen(asReader), seen(asWriter));
        }
        for (const op of writes) {
          const input = { ...inputOf(op.template), ...bodyOf(op.method, op.template, project) };
          const answer = await api.post(`/trpc/${op.procedure}`, input, read);
          if (ownWrite(op)) {
            assert.equal(answer.status, 404, `${op.procedure}: ${answer.text}`);
            continue;
          }
          assert.equal(answer.status, 403, `${op.procedure}: ${answer.text}`);
          assert.equal(answer.body.error.data.error.code, "forbidden", op.procedure);
          assert.equal(answer.body.error.data.code, "FORBIDDEN");
        }
        assert.deepEqual(await state(), before);
      });

      await t.step("in a /trpc batch, each mutation is refused", async () => {
        const batch = writes.filter((op) => !ownWrite(op)).slice(0, 5);
        const body = Object.fromEntries(
          batch.map((
            op,
            i,
          ) => [i, { ...inputOf(op.template), ...bodyOf(op.method, op.template, project) }]),
        );
        const path = `/trpc/${batch.map((op) => op.procedure).join(",")}?batch=1`;
        const answer = await api.post(path, body, read);
        assert.equal(answer.status, 403, answer.text);
        assert.equal(answer.body.length, batch.length);
        for (const item of answer.body) {
          assert.equal(item.error.data.error.code, "forbidden");
        }
        // Queries in a batch answer a read-only key.
        const queries = gets.filter((op) => !op.template.includes("{")).slice(0, 3);
        const input = encodeURIComponent(
          JSON.stringify(Object.fromEntries(queries.map((_, i) => [i, {}]))),
        );
        const read3 = await api.get(
          `/trpc/${queries.map((op) => op.procedure).join(",")}?batch=1&input=${input}`,
          read,
        );
        assert.equal(read3.status, 200, read3.text);
        assert.equal(read3.body.length, queries.length);
        assert.deepEqual(await state(), before);
      });

      await t.step("whoami tells each key its scope, on REST and /trpc", async () => {
        // With the service's version and the database it runs on, the same for every key.
        const service = {
          version: SERVICE_VERSION,
          database: backend === "pglite" ? "embedded" : "postgresql",
        };
        // And who the caller is: the configured keys' names and roles, of every project.
        const writer = { scope: "write", name: "SERVICE_API_KEY", role: "admin", projects: null };
        const reader = {
          scope: "read",
          name: "SERVICE_API_KEYS_READONLY",
          role: "viewer",
          projects: null,
        };
        assert.deepEqual((await api.get("/api/v1/whoami")).body, {
          data: { ...writer, ...service },
        });
        assert.deepEqual((await api.get("/api/v1/whoami", read)).body, {
          data: { ...reader, ...service },
        });
        const trpc = "/trpc/whoami.get?input=%7B%7D";
        assert.deepEqual((await api.get(trpc)).body, {
          result: { data: { data: { ...writer, ...service } } },
        });
        assert.deepEqual((await api.get(trpc, read)).body, {
          result: { data: { data: { ...reader, ...service } } },
        });
        const none = await api.get("/api/v1/whoami", { key: "wrong-key-0123456789" });
        assert.equal(none.status, 401);
      });

      await t.step("the write key still writes", async () => {
        const answer = await api.patch(`/api/v1/projects/${project}`, { label: "Written" });
        assert.equal(answer.status, 200, answer.text);
      });
    } finally {
      await app.close();
    }
  });
}
