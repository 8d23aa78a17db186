// Stored credentials and read-only keys (SERVICE_API_KEYS_READONLY): every GET of the served
// document, every tRPC query (alone, batched, streamed or paged) and the CLI's export answer a
// read-only key without one of them, nor any GET or query a stored viewer key (limited to the
// project or not); the write key reads them as stored.
import assert from "node:assert/strict";
import { MASKED, REDACTED } from "@probe/shared";
import { type App, createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
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
import { startTarget } from "../testing/target_server.ts";
import { procedurePathOf } from "../procedures/caller.ts";
import { runCliOn } from "../../cli/testing.ts";

/** Every stored secret holds this, so that one search finds any of them in an answer. */
const SECRET = "s3cr3t";

// deno-lint-ignore no-explicit-any
type Json = any;

async function startApp(backend: "pglite" | "postgres"): Promise<App> {
  return await createApp({
    database: await freshDatabase(backend),
    apiKeys: [TEST_API_KEY],
    config: {
      readOnlyApiKeys: [TEST_READ_KEY],
      // A header of the operator's own, masked because PROBE_SECRET_HEADERS names it.
      probeSecretHeaders: ["x-tenant-pin"],
    },
    log: createLogger("silent"),
    runProbe: (target) => executeProbe(target, { policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
  });
}

const HEADERS = {
  Authorization: `Bearer ${SECRET}-bearer`,
  Cookie: `sid=${SECRET}-cookie`,
  "Proxy-Authorization": `Basic ${SECRET}-proxy`,
  "X-Api-Key": `${SECRET}-apikey`,
  "X-Tenant-Pin": `${SECRET}-pin`,
  Accept: "application/json",
};

for (const backend of backends()) {
  Deno.test(`read-only keys never read stored credentials; write keys do [${backend}]`, async (t) => {
    const app = await startApp(backend);
    const target = await startTarget();
    const api = new TestClient(app.handler);
    const read = { key: TEST_READ_KEY };
    try {
      const project = uniqueName("sec");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const port = new URL(target.origin).port;
      // Query values are secrets whatever their names (`pass`, `code`), as are bare parts.
      const url = `http://user:${SECRET}-pass@127.0.0.1:${port}/health?token=${SECRET}-tok` +
        `&page=2&api_key=${SECRET}-key&pass=${SECRET}-qpass&code=${SECRET}-code&${SECRET}-bare`;
      const created = await api.post(`/api/v1/projects/${project}/probes`, {
        url,
        headers: HEADERS,
      });
      assert.equal(created.status, 201, created.text);
      const probeId = created.body.data.probe_id;
      const probePath = `/api/v1/projects/${project}/probes/${probeId}`;
      // A failed run: results, an open incident (threshold 1) and the overview's incidents.
      await api.patch(`/api/v1/projects/${project}/alerts`, { failure_threshold: 1 });
      target.setHealth(503, { status: "DOWN" });
      assert.equal((await api.post(`${probePath}/run`)).status, 200);
      const webhook = uniqueName("sec-hook");
      const slack = uniqueName("sec-slack");
      for (
        const body of [
          {
            name: webhook,
            kind: "webhook",
            url: `http://127.0.0.1:9/hook/${SECRET}?token=${SECRET}`,
          },
          { name: slack, kind: "slack", url: `https://hooks.slack.com/services/${SECRET}-slack` },
        ]
      ) {
        const made = await api.post("/api/v1/notification-targets", body);
        assert.equal(made.status, 201, made.text);
      }
      const incidents = await api.get(`/api/v1/incidents?project=${project}`);
      assert.equal(incidents.body.meta.count, 1, incidents.text);

      const shownUrl = `http://user:${MASKED}@127.0.0.1:${port}/health?token=${MASKED}` +
        `&page=${MASKED}&api_key=${MASKED}&pass=${MASKED}&code=${MASKED}&${MASKED}`;
      const shownHeaders = {
        Authorization: REDACTED,
        Cookie: REDACTED,
        "Proxy-Authorization": REDACTED,
        "X-Api-Key": REDACTED,
        "X-Tenant-Pin": REDACTED,
        Accept: "application/json",
      };

      await t.step("a read-only key reads each secret-bearing field masked", async () => {
        const probe = (await api.get(probePath, read)).body.data;
        assert.equal(probe.url, shownUrl);
        assert.deepEqual(probe.headers, shownHeaders);
        for (const list of ["/api/v1/probes", `/api/v1/projects/${project}/probes`]) {
          for (const paging of ["", "?limit=1"]) {
            const answer = await api.get(`${list}${paging}`, read);
            const mine = answer.body.data.filter((p: Json) => p.probe_id === probeId);
            assert.equal(mine.length, 1, `${list}${paging}`);
            assert.equal(mine[0].url, shownUrl);
            assert.deepEqual(mine[0].headers, shownHeaders);
          }
        }
        const status = await api.get(`/api/v1/projects/${project}/status`, read);
        assert.equal(status.body.data[0].url, shownUrl);
        const overview = await api.get(`/api/v1/overview?project=${project}`, read);
        assert.equal(overview.body.data.projects[0].probes[0].url, shownUrl);
        const targets = (await api.get("/api/v1/notification-targets", read)).body.data;
        const byName = Object.fromEntries(targets.map((x: Json) => [x.name, x.url]));
        assert.equal(byName[webhook], "http://127.0.0.1:9/…");
        assert.equal(byName[slack], "https://hooks.slack.com/…");
        const one = await api.get(`/api/v1/notification-targets/${webhook}`, read);
        assert.equal(one.body.data.url, "http://127.0.0.1:9/…");
        const trpc = await api.get(
          `/trpc/probes.get?input=${encodeURIComponent(JSON.stringify({ project, probeId }))}`,
          read,
        );
        assert.equal(trpc.body.result.data.data.url, shownUrl);
        assert.deepEqual(trpc.body.result.data.data.headers, shownHeaders);
      });

      await t.step("the write key reads them as stored", async () => {
        const probe = (await api.get(probePath)).body.data;
        assert.equal(probe.url, url);
        assert.deepEqual(probe.headers, HEADERS);
        const listed = (await api.get(`/api/v1/projects/${project}/probes`)).body.data[0];
        assert.equal(listed.url, url);
        assert.deepEqual(listed.headers, HEADERS);
        assert.equal((await api.get(`/api/v1/projects/${project}/status`)).body.data[0].url, url);
        const overview = await api.get(`/api/v1/overview?project=${project}`);
        assert.equal(overview.body.data.projects[0].probes[0].url, url);
        const hook = await api.get(`/api/v1/notification-targets/${webhook}`);
        assert.equal(hook.body.data.url, `http://127.0.0.1:9/hook/${SECRET}?token=${SECRET}`);
        // A rewrite by the write key from what it read keeps every credential.
        const {
          project: _p,
          probe_id: _id,
          state: _s,
          state_since: _ss,
          effective_interval_seconds: _ei,
          effective_timeout_ms: _et,
          effective_locations: _el,
          location_states: _ls,
          ...definition
        } = probe;
        const again = await api.post(`/api/v1/projects/${project}/probes`, definition);
        assert.equal(again.status, 200, again.text);
        assert.deepEqual((await api.get(probePath)).body.data.headers, HEADERS);
      });

      const doc = (await api.get("/api/v1/openapi.json", { key: null })).body;
      const gets: { template: string; procedure: string }[] = Object.entries(doc.paths)
        .filter(([, item]) => (item as Json).get)
        .map(([template, item]) => ({
          template,
          procedure: procedurePathOf((item as Json).get.operationId).join("."),
        }));
      const values: Record<string, string> = {
        project,
        probeId,
        name: webhook,
        id: incidents.body.data[0].id,
      };
      const restPath = (template: string) =>
        `/api/v1${template.replace(/\{(.+?)\}/g, (_, n) => values[n])}`;
      const inputOf = (template: string) =>
        Object.fromEntries(
          [...template.matchAll(/\{(.+?)\}/g)].map(([, name]) => [name, values[name]]),
        );

      await t.step("no GET and no tRPC query answers a read-only key a secret", async () => {
        assert.ok(gets.length > 10);
        let withSecrets = 0;
        for (const { template, procedure } of gets) {
          const path = restPath(template);
          const answer = await api.get(path, read);
          assert.ok(!answer.text.includes(SECRET), `GET ${template}: ${answer.text}`);
          if ((await api.get(path)).text.includes(SECRET)) withSecrets++;
          const input = encodeURIComponent(JSON.stringify(inputOf(template)));
          const trpc = await api.get(`/trpc/${procedure}?input=${input}`, read);
          assert.ok(!trpc.text.includes(SECRET), `${procedure}: ${trpc.text}`);
        }
        // What the write key reads through: probes (3), status, overview, targets (2).
        assert.ok(withSecrets >= 7, `${withSecrets} answers hold secrets for the write key`);
        // The admin reads (keys, audit log) refuse a read-only key: not in its batch.
        const batch = gets.filter((g) =>
          (!g.template.includes("{") || g.template === "/overview") &&
          !g.template.startsWith("/api-keys") && !g.template.startsWith("/audit-log")
        );
        const input = encodeURIComponent(
          JSON.stringify(Object.fromEntries(batch.map((g, i) => [i, inputOf(g.template)]))),
        );
        const batched = await api.get(
          `/trpc/${batch.map((g) => g.procedure).join(",")}?batch=1&input=${input}`,
          read,
        );
        assert.equal(batched.status, 200, batched.text);
        assert.ok(!batched.text.includes(SECRET), batched.text);
      });

      await t.step("stored viewer keys, limited or not, read no secret", async () => {
        const viewerKey = async (projects?: string[]) => {
          const body = { name: uniqueName("sec-viewer"), role: "viewer", projects };
          const made = await api.post("/api/v1/api-keys", body);
          assert.equal(made.status, 201, made.text);
          return { key: made.body.data.key as string };
        };
        for (const viewer of [await viewerKey(), await viewerKey([project])]) {
          const probe = (await api.get(probePath, viewer)).body.data;
          assert.equal(probe.url, shownUrl);
          assert.deepEqual(probe.headers, shownHeaders);
          for (const { template, procedure } of gets) {
            const answer = await api.get(restPath(template), viewer);
            assert.ok(answer.status < 500, `GET ${template}: ${answer.text}`);
            assert.ok(!answer.text.includes(SECRET), `GET ${template}: ${answer.text}`);
            const input = encodeURIComponent(JSON.stringify(inputOf(template)));
            const trpc = await api.get(`/trpc/${procedure}?input=${input}`, viewer);
            assert.ok(!trpc.text.includes(SECRET), `${procedure}: ${trpc.text}`);
          }
        }
      });

      await t.step("the CLI's export with a read-only key holds no secret", async () => {
        for (const args of [["export"], ["export", "--header-values"]]) {
          const asReader = await runCliOn(app, args, { env: { SERVICE_API_KEY: TEST_READ_KEY } });
          assert.equal(asReader.code, 0, asReader.stderr);
          assert.ok(!asReader.stdout.includes(SECRET), asReader.stdout);
          // Nothing masked is written as if it were the value: masked headers and the cut
          // webhook URL become variables; the masked probe URL is told on stderr.
          assert.ok(!asReader.stdout.includes(REDACTED), asReader.stdout);
          assert.ok(!asReader.stdout.includes("/…"), asReader.stdout);
          assert.match(asReader.stderr, /1 probe URLs hold credentials masked/);
          assert.match(asReader.stderr, /PROBE_TARGET_SEC_HOOK_.*_URL/);
          const asWriter = await runCliOn(app, args);
          assert.equal(asWriter.code, 0, asWriter.stderr);
          assert.ok(asWriter.stdout.includes(`${SECRET}-pass`), asWriter.stdout);
        }
      });
    } finally {
      await target.close();
      await app.close();
    }
  });
}
