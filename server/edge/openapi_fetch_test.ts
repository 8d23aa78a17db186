// Drives the running server through openapi-fetch, typed by openapi-typescript from the served
// document: a client none of us wrote, so the document has to be right for it to work.
import assert from "node:assert/strict";
import createClient, { type Middleware } from "openapi-fetch";
import { openApiTypes } from "../../tools/openapi_generate.ts";
import type { paths } from "../ui/openapi.gen.ts";
import { backends, uniqueName } from "../testing/app.ts";
import { startLiveServer } from "../testing/live.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

for (const backend of backends()) {
  Deno.test(`openapi-fetch drives every endpoint [${backend}]`, async (t) => {
    const server = await startLiveServer(backend);
    try {
      const docText = await (await fetch(`${server.url}/api/v1/openapi.json`)).text();
      const doc = JSON.parse(docText);

      await t.step(
        "the committed openapi-typescript types are those of the served document",
        async () => {
          const committed = await Deno.readTextFile(
            new URL("../ui/openapi.gen.ts", import.meta.url),
          );
          const generated = await openApiTypes(docText);
          assert.ok(
            generated === committed,
            "server/ui/openapi.gen.ts is stale: run `deno task openapi:generate`",
          );
        },
      );

      // Every answer's status must be one the document lists for its operation.
      const seen: string[] = [];
      const checkStatus: Middleware = {
        onResponse({ schemaPath, request, response }) {
          const op = doc.paths[schemaPath]?.[request.method.toLowerCase()];
          assert.ok(op, `${request.method} ${schemaPath} is not in the document`);
          assert.ok(
            String(response.status) in op.responses,
            `${request.method} ${schemaPath} answered ${response.status}, not documented`,
          );
          seen.push(`${request.method} ${schemaPath} ${response.status}`);
        },
      };
      const api = createClient<paths>({
        baseUrl: `${server.url}/api/v1`,
        headers: { "X-Service-Api-Key": server.apiKey },
      });
      api.use(checkStatus);

      await t.step("projects: create, get, list, patch, delete", async () => {
        const project = uniqueName();
        const created = await api.POST("/projects", { body: { project, label: "Shop" } });
        assert.equal(created.response.status, 201);
        assert.deepEqual(created.data, { data: { project } });

        const got = await api.GET("/projects/{project}", { params: { path: { project } } });
        assert.equal(got.response.status, 200);
        assert.deepEqual(got.data?.data, {
          project,
          label: "Shop",
          description: null,
          status: "enabled",
          default_locations: null,
        });

        const listed = await api.GET("/projects", { params: { query: { project } } });
        assert.equal(listed.data?.meta.count, 1);
        assert.equal(listed.data?.data[0].project, project);

        const patched = await api.PATCH("/projects/{project}", {
          params: { path: { project } },
          body: { description: "The shop", status: "disabled" },
        });
        assert.equal(patched.response.status, 200);
        assert.deepEqual(patched.data, { data: { project } });
        const after = await api.GET("/projects/{project}", { params: { path: { project } } });
        assert.equal(after.data?.data.status, "disabled");
        assert.equal(after.data?.data.description, "The shop");

        const deleted = await api.DELETE("/projects/{project}", { params: { path: { project } } });
        assert.equal(deleted.response.status, 200);
        assert.deepEqual(deleted.data?.data, { project, deleted: true, archived: true });
        assert.equal(typeof deleted.data?.meta.message, "string");

        const gone = await api.GET("/projects/{project}", { params: { path: { project } } });
        assert.equal(gone.response.status, 404);
        assert.equal(gone.error?.error.code, "not_found");
      });

      await t.step("probes: both creates, lists, get, patch, delete", async () => {
        const project = uniqueName();
        await api.POST("/projects", { body: { project } });
        const path = { project };
        const first = await api.POST("/projects/{project}/probes", {
          params: { path },
          body: { url: "http://127.0.0.1:9/health", method: "GET", latency: 300 },
        });
        assert.equal(first.response.status, 201);
        assert.equal(first.data?.meta.created, true);
        const probeId = first.data!.data.probe_id;

        const again = await api.POST("/projects/{project}/probes", {
          params: { path },
          body: { url: "http://127.0.0.1:9/health", headers: { accept: "text/plain" } },
        });
        assert.equal(again.response.status, 200);
        assert.equal(again.data?.meta.created, false);
        assert.equal(again.data?.data.probe_id, probeId);

        const second = await api.POST("/probes", {
          body: { project, url: "http://127.0.0.1:9/other", method: "POST", body: { a: 1 } },
        });
        assert.equal(second.response.status, 201);

        const all = await api.GET("/probes", { params: { query: { project } } });
        assert.equal(all.data?.meta.count, 2);
        const ofProject = await api.GET("/projects/{project}/probes", { params: { path } });
        assert.deepEqual(
          ofProject.data?.data.map((p) => p.probe_id).sort(),
          all.data?.data.map((p) => p.probe_id).sort(),
        );

        const got = await api.GET("/projects/{project}/probes/{probeId}", {
          params: { path: { project, probeId } },
        });
        assert.equal(got.data?.data.url, "http://127.0.0.1:9/health");
        assert.deepEqual(got.data?.data.headers, { accept: "text/plain" });

        const patched = await api.PATCH("/projects/{project}/probes/{probeId}", {
          params: { path: { project, probeId } },
          body: { method: "HEAD" },
        });
        assert.equal(patched.response.status, 200);
        const newId = patched.data!.data.probe_id;
        assert.notEqual(newId, probeId);

        const deleted = await api.DELETE("/projects/{project}/probes/{probeId}", {
          params: { path: { project, probeId: newId } },
        });
        assert.equal(deleted.response.status, 204);
        assert.equal(deleted.data, undefined);
        assert.equal(deleted.error, undefined);

        const gone = await api.GET("/projects/{project}/probes/{probeId}", {
          params: { path: { project, probeId: newId } },
        });
        assert.equal(gone.response.status, 404);
        assert.equal(gone.error?.error.code, "not_found");
      });

      await t.step("settings: get and patch", async () => {
        const got = await api.GET("/settings/iam-alive");
        assert.equal(got.response.status, 200);
        const patched = await api.PATCH("/settings/iam-alive", {
          body: { interval_hours: 12, channels: ["webhook"] },
        });
        assert.deepEqual(patched.data?.data, {
          enabled: true,
          interval_hours: 12,
          channels: ["webhook"],
        });
        const empty = await api.PATCH("/settings/iam-alive", { body: {} });
        assert.equal(empty.response.status, 422);

        const sent = await api.POST("/settings/iam-alive/test", { body: {} });
        assert.equal(sent.response.status, 200);
        assert.equal(sent.data?.data.report.trigger, "test");
        assert.deepEqual(sent.data?.data.deliveries.map((d) => d.channel), ["webhook"]);
        const deliveries = await api.GET("/settings/iam-alive/deliveries", {
          params: { query: { limit: 5 } },
        });
        assert.equal(deliveries.response.status, 200);
        assert.equal(deliveries.data?.data[0].sequence, sent.data?.data.report.sequence);
        const badLimit = await api.GET("/settings/iam-alive/deliveries", {
          params: { query: { limit: 0 } },
        });
        assert.equal(badLimit.response.status, 422);
      });

      await t.step("results: list, stats, status", async () => {
        const project = uniqueName();
        await api.POST("/projects", { body: { project } });
        const created = await api.POST("/projects/{project}/probes", {
          params: { path: { project } },
          body: { url: "https://results.example.test/" },
        });
        const probeId = created.data!.data.probe_id;
        const path = { project, probeId };
        const results = await api.GET("/projects/{project}/probes/{probeId}/results", {
          params: { path, query: { limit: 10 } },
        });
        assert.equal(results.response.status, 200);
        assert.deepEqual(results.data?.meta, { count: 0, next_before: null });
        const stats = await api.GET("/projects/{project}/probes/{probeId}/stats", {
          params: { path, query: { window: "7d" } },
        });
        assert.equal(stats.response.status, 200);
        assert.equal(stats.data?.data.runs, 0);
        const badWindow = await api.GET("/projects/{project}/probes/{probeId}/stats", {
          // deno-lint-ignore no-explicit-any
          params: { path, query: { window: "2h" as any } },
        });
        assert.equal(badWindow.response.status, 422);
        const status = await api.GET("/projects/{project}/status", {
          params: { path: { project } },
        });
        assert.equal(status.response.status, 200);
        assert.equal(status.data?.data[0].probe_id, probeId);
        const missing = await api.GET("/projects/{project}/status", {
          params: { path: { project: uniqueName("missing") } },
        });
        assert.equal(missing.response.status, 404);
      });

      await t.step("alerts and maintenance: policy, overrides, windows", async () => {
        const policy = await api.GET("/settings/alerts");
        assert.equal(policy.response.status, 200);
        const patched = await api.PATCH("/settings/alerts", { body: { failure_threshold: 4 } });
        assert.equal(patched.data?.data.failure_threshold, 4);
        const unknownTarget = await api.PATCH("/settings/alerts", { body: { targets: ["ghost"] } });
        assert.equal(unknownTarget.response.status, 422);
        assert.equal(unknownTarget.error?.error.details?.[0].path, "targets.0");

        const project = uniqueName();
        await api.POST("/projects", { body: { project } });
        const params = { path: { project } };
        const overrides = await api.PATCH("/projects/{project}/alerts", {
          params,
          body: { reminder_minutes: 30, notify_degraded: null },
        });
        assert.equal(overrides.data?.data.effective.reminder_minutes, 30);
        const got = await api.GET("/projects/{project}/alerts", { params });
        assert.deepEqual(got.data, overrides.data);

        const created = await api.POST("/projects/{project}/maintenance", {
          params,
          body: { starts_at: "2031-01-01T00:00:00+01:00", ends_at: "2031-01-01T02:00:00+01:00" },
        });
        assert.equal(created.response.status, 201);
        assert.equal(created.data?.data.starts_at, "2030-12-31T23:00:00.000Z");
        const listed = await api.GET("/projects/{project}/maintenance", {
          params: { ...params, query: { state: "upcoming" } },
        });
        assert.deepEqual(listed.data, { data: [created.data!.data], meta: { count: 1 } });
        const id = created.data!.data.id;
        const deleted = await api.DELETE("/projects/{project}/maintenance/{id}", {
          params: { path: { project, id } },
        });
        assert.equal(deleted.response.status, 204);
        const again = await api.DELETE("/projects/{project}/maintenance/{id}", {
          params: { path: { project, id } },
        });
        assert.equal(again.response.status, 404);
      });

      await t.step("notification targets, incidents and run-now", async () => {
        const kinds = await api.GET("/notification-target-kinds");
        assert.ok(kinds.data?.data.some((k) => k.kind === "mail"));
        const name = uniqueName("t");
        const created = await api.POST("/notification-targets", {
          body: { name, kind: "mail", recipients: ["ops@example.com"] },
        });
        assert.equal(created.response.status, 201);
        const listed = await api.GET("/notification-targets");
        assert.ok(listed.data?.data.some((t) => t.name === name));
        const got = await api.GET("/notification-targets/{name}", { params: { path: { name } } });
        assert.equal(got.data?.data.kind, "mail");
        const updated = await api.PATCH("/notification-targets/{name}", {
          params: { path: { name } },
          body: { recipients: ["oncall@example.com"] },
        });
        assert.equal(updated.response.status, 200);
        const tested = await api.POST("/notification-targets/{name}/test", {
          params: { path: { name: "log" } },
        });
        assert.equal(tested.data?.data.outcome, "delivered");
        const deleted = await api.DELETE("/notification-targets/{name}", {
          params: { path: { name } },
        });
        assert.equal(deleted.response.status, 204);

        const incidents = await api.GET("/incidents", { params: { query: { state: "open" } } });
        assert.equal(incidents.response.status, 200);
        const missing = await api.GET("/incidents/{id}", { params: { path: { id: "999999" } } });
        assert.equal(missing.response.status, 404);
        const ack = await api.POST("/incidents/{id}/acknowledge", {
          params: { path: { id: "999999" } },
        });
        assert.equal(ack.response.status, 404);

        // A run of a closed port on loopback (which test servers may reach): `down`.
        const project = uniqueName();
        await api.POST("/projects", { body: { project } });
        const probe = await api.POST("/projects/{project}/probes", {
          params: { path: { project } },
          body: { url: "http://127.0.0.1:9/" },
        });
        const run = await api.POST("/projects/{project}/probes/{probeId}/run", {
          params: { path: { project, probeId: probe.data!.data.probe_id } },
        });
        assert.equal(run.response.status, 200);
        assert.equal(run.data?.data.trigger, "manual");
        assert.equal(run.data?.data.outcome, "down");
        assert.equal(run.data?.data.error, "connection refused");
      });

      await t.step("dashboard reads, status pages and badges", async () => {
        const project = uniqueName();
        await api.POST("/projects", { body: { project } });
        const probe = await api.POST("/projects/{project}/probes", {
          params: { path: { project } },
          body: { url: "http://127.0.0.1:9/" },
        });
        const overview = await api.GET("/overview", { params: { query: { project } } });
        assert.equal(overview.data?.data.projects[0].probes[0].state, "unknown");
        const series = await api.GET("/projects/{project}/probes/{probeId}/series", {
          params: {
            path: { project, probeId: probe.data!.data.probe_id },
            query: { window: "7d" },
          },
        });
        assert.equal(series.data?.data.buckets.length, 168);

        const path = { project };
        const settings = await api.GET("/projects/{project}/status-page", { params: { path } });
        assert.equal(settings.data?.data.public, false);
        const patched = await api.PATCH("/projects/{project}/status-page", {
          params: { path },
          body: { public: true, title: "Shop" },
        });
        assert.equal(patched.data?.data.title, "Shop");
        const made = await api.POST("/projects/{project}/badges", { params: { path }, body: {} });
        assert.equal(made.response.status, 201);
        const id = made.data!.data.id;
        const listed = await api.GET("/projects/{project}/badges", { params: { path } });
        assert.equal(listed.data?.meta.count, 1);
        const rotated = await api.POST("/projects/{project}/badges/{id}/rotate", {
          params: { path: { project, id } },
        });
        assert.notEqual(rotated.data?.data.token, made.data!.data.token);
        const deleted = await api.DELETE("/projects/{project}/badges/{id}", {
          params: { path: { project, id } },
        });
        assert.equal(deleted.response.status, 204);
      });

      await t.step("heartbeats", async () => {
        const project = uniqueName();
        await api.POST("/projects", { body: { project } });
        const path = { project, name: "nightly" };
        const made = await api.POST("/projects/{project}/heartbeats", {
          params: { path: { project } },
          body: { name: "nightly", schedule: "0 3 * * *", timezone: "Europe/Berlin" },
        });
        assert.equal(made.response.status, 201);
        assert.equal(made.data?.data.state, "new");
        const listed = await api.GET("/projects/{project}/heartbeats", {
          params: { path: { project } },
        });
        assert.equal(listed.data?.meta.count, 1);
        const read = await api.GET("/projects/{project}/heartbeats/{name}", { params: { path } });
        assert.equal(read.data?.data.ping_url, made.data?.data.ping_url);
        const changed = await api.PATCH("/projects/{project}/heartbeats/{name}", {
          params: { path },
          body: { period_seconds: 3600 },
        });
        assert.equal(changed.data?.data.schedule, null);
        const pings = await api.GET("/projects/{project}/heartbeats/{name}/pings", {
          params: { path },
        });
        assert.deepEqual(pings.data?.data, []);
        const deleted = await api.DELETE("/projects/{project}/heartbeats/{name}", {
          params: { path },
        });
        assert.equal(deleted.response.status, 204);
      });

      await t.step("API keys", async () => {
        const name = uniqueName("key");
        const made = await api.POST("/api-keys", { body: { name, role: "viewer" } });
        assert.equal(made.response.status, 201);
        const key = made.data!.data.key;
        const listed = await api.GET("/api-keys");
        assert.equal(listed.data?.data[0].configured, true);
        const path = { name };
        const got = await api.GET("/api-keys/{name}", { params: { path } });
        assert.equal(got.data?.data.role, "viewer");
        const patched = await api.PATCH("/api-keys/{name}", {
          params: { path },
          body: { role: "editor" },
        });
        assert.equal(patched.data?.data.role, "editor");
        const rotated = await api.POST("/api-keys/{name}/rotate", { params: { path } });
        assert.notEqual(rotated.data?.data.key, key);
        const deleted = await api.DELETE("/api-keys/{name}", { params: { path } });
        assert.equal(deleted.response.status, 204);
        // The key's changes are in the audit log, newest first.
        const audit = await api.GET("/audit-log", { params: { query: { limit: 5 } } });
        assert.equal(audit.response.status, 200);
        assert.equal(audit.data?.data[0].operation, "apiKeys.delete");
      });

      await t.step("sessions", async () => {
        const listed = await api.GET("/sessions");
        assert.equal(listed.response.status, 200);
        assert.deepEqual(listed.data?.data, []);
        const ended = await api.DELETE("/sessions/{id}", { params: { path: { id: "none" } } });
        assert.equal(ended.response.status, 404);
      });

      await t.step("locations and the runner protocol", async () => {
        const name = uniqueName("loc");
        const made = await api.POST("/locations", { body: { name, label: "Office" } });
        assert.equal(made.response.status, 201);
        const token = made.data!.data.token;
        const listed = await api.GET("/locations");
        assert.equal(listed.data?.data[0].kind, "local");
        const path = { location: name };
        const got = await api.GET("/locations/{location}", { params: { path } });
        assert.equal(got.data?.data.label, "Office");
        const patched = await api.PATCH("/locations/{location}", {
          params: { path },
          body: { label: "HQ" },
        });
        assert.equal(patched.data?.data.label, "HQ");
        const rotated = await api.POST("/locations/{location}/token", { params: { path } });
        assert.notEqual(rotated.data?.data.token, token);
        const asRunner = { "X-Service-Api-Key": rotated.data!.data.token };
        const claimed = await api.POST("/runner/claim", {
          body: { runner: "r1", version: "1", wait_seconds: 0 },
          headers: asRunner,
        });
        assert.equal(claimed.response.status, 200);
        assert.deepEqual(claimed.data?.data.runs, []);
        const posted = await api.POST("/runner/results", {
          body: {
            runner: "r1",
            version: "1",
            results: [{
              run_id: `${crypto.randomUUID()}.1.1.0`,
              started_at: new Date().toISOString(),
              duration_ms: 1,
              outcome: "up",
              http_status: 200,
              error: null,
              address: null,
              failed_checks: null,
            }],
          },
          headers: asRunner,
        });
        assert.equal(posted.response.status, 409);
        const deleted = await api.DELETE("/locations/{location}", { params: { path } });
        assert.equal(deleted.response.status, 204);
      });

      await t.step("whoami", async () => {
        const me = await api.GET("/whoami");
        assert.equal(me.response.status, 200);
        assert.deepEqual(me.data?.data.scope, "write");
        assert.equal(me.data?.data.database, backend === "pglite" ? "embedded" : "postgresql");
      });

      await t.step("failures answer the documented error body", async () => {
        const project = uniqueName();
        await api.POST("/projects", { body: { project } });
        const conflict = await api.POST("/projects", { body: { project } });
        assert.equal(conflict.response.status, 409);
        assert.equal(conflict.error?.error.code, "conflict");

        const invalid = await api.POST("/projects/{project}/probes", {
          params: { path: { project } },
          body: { url: "not a url" },
        });
        assert.equal(invalid.response.status, 422);
        const details: Json[] = invalid.error?.error.details ?? [];
        assert.ok(details.some((d) => d.path === "url"), JSON.stringify(details));

        const missing = await api.POST("/probes", {
          body: { project: uniqueName("missing"), url: "http://127.0.0.1:9/" },
        });
        assert.equal(missing.response.status, 404);

        const noKey = await api.GET("/projects", {
          headers: { "X-Service-Api-Key": "wrong-key-123" },
        });
        assert.equal(noKey.response.status, 401);
        assert.equal(noKey.error?.error.code, "unauthorized");
      });

      await t.step("every operation of the document was called", () => {
        const called = new Set(seen.map((s) => s.split(" ").slice(0, 2).join(" ")));
        for (const [path, item] of Object.entries(doc.paths as Json)) {
          for (const method of Object.keys(item as Json)) {
            assert.ok(called.has(`${method.toUpperCase()} ${path}`), `${method} ${path}`);
          }
        }
      });
    } finally {
      await server.close();
    }
  });
}
