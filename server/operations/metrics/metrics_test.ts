// GET /metrics through the real handler, on each database: keys, series and their values, the
// bounded labels, METRICS_PER_PROBE, and promtool's lint.
import assert from "node:assert/strict";
import type { App } from "../../app.ts";
import { createApp } from "../../app.ts";
import { createLogger } from "../../base/log.ts";
import { systemClock } from "../../base/clock.ts";
import { runDueProbesOnce } from "../../testing/runs.ts";
import {
  backends,
  freshDatabase,
  TEST_API_KEY,
  TEST_READ_KEY,
  TestClient,
  uniqueName,
} from "../../testing/app.ts";
import { startTarget } from "../../testing/target_server.ts";
import { STATE_VALUES } from "./database.ts";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined if none. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}) {
  const found = samples.filter((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  );
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)}: ${found.length} samples`);
  return found[0]?.value;
}

async function appOn(backend: string, { perProbe = true } = {}) {
  return await createApp({
    database: await freshDatabase(backend as "pglite" | "postgres"),
    apiKeys: [TEST_API_KEY],
    config: { readOnlyApiKeys: [TEST_READ_KEY], metricsPerProbe: perProbe },
    log: createLogger("silent"),
    iamAlive: { writeLine: () => {} },
  });
}

async function scrape(app: App, headers: Record<string, string>) {
  const answer = await app.handler(new Request("http://service.test/metrics", { headers }));
  return {
    status: answer.status,
    type: answer.headers.get("content-type"),
    text: await answer.text(),
  };
}

const reader = { "x-service-api-key": TEST_READ_KEY };

/** Runs the app's probes once with a runner reporting to the app's metrics. */
const runOnce = (app: App) =>
  runDueProbesOnce(app.database.db, {
    observer: app.metrics.runner.observer,
    onRunner: (runner) => app.metrics.runner.watch(runner),
  });

const promtool = new Deno.Command("sh", { args: ["-c", "command -v promtool"] }).outputSync()
  .success;
// CI installs promtool (.ci/run), so there a missing one is a failure, not a skipped step.
const inCi = Boolean(Deno.env.get("CI"));

for (const backend of backends()) {
  Deno.test(`/metrics serves the service's series to any key [${backend}]`, async (t) => {
    const app = await appOn(backend);
    const api = new TestClient(app.handler);
    const target = await startTarget();
    try {
      const project = uniqueName("metrics");
      await api.post("/api/v1/projects", { project });
      const up = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `${target.origin}/ok`,
      });
      const down = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `${target.origin}/status/500`,
      });
      const [upId, downId] = [up.body.data.probe_id, down.body.data.probe_id];
      await runOnce(app);

      await t.step(
        "without a key it is 401, with a read-only key or a bearer token 200",
        async () => {
          for (
            const headers of [{}, { "x-service-api-key": "wrong-key-0000000" }] as Record<
              string,
              string
            >[]
          ) {
            const refused = await scrape(app, headers);
            assert.equal(refused.status, 401);
            assert.equal(JSON.parse(refused.text).error.code, "unauthorized");
          }
          for (const headers of [reader, { authorization: `Bearer ${TEST_READ_KEY}` }]) {
            const answer = await scrape(app, headers);
            assert.equal(answer.status, 200);
            assert.match(answer.type ?? "", /^text\/plain; version=0\.0\.4/);
            assert.ok(answer.text.includes("# TYPE http_requests_total counter"));
          }
        },
      );

      await t.step("each probe's last result and state", async () => {
        const samples = parse((await scrape(app, reader)).text);
        const of = (probe_id: string) => ({ project, probe_id });
        assert.equal(valueOf(samples, "probe_up", of(upId)), 1);
        assert.equal(valueOf(samples, "probe_up", of(downId)), 0);
        for (const id of [upId, downId]) {
          const latency = valueOf(samples, "probe_latency_seconds", of(id));
          assert.ok(latency !== undefined && latency >= 0 && latency < 5, `latency ${latency}`);
        }
        const states = await app.database.db.selectFrom("probe_schedule")
          .innerJoin("probes", "probes.key", "probe_schedule.probe_key")
          .select(["probes.probe_id", "probe_schedule.state"])
          .where("probes.project", "=", project).execute();
        assert.equal(states.length, 2);
        for (const { probe_id, state } of states) {
          assert.equal(valueOf(samples, "probe_state", of(probe_id)), STATE_VALUES[state]);
        }
        assert.equal(valueOf(samples, "probe_state", of(upId)), STATE_VALUES.up);
      });

      await t.step("requests are counted by route template, never by raw path", async () => {
        const route = "/api/v1/projects/{project}/probes";
        const before = parse((await scrape(app, reader)).text);
        const count = (samples: Sample[]) =>
          valueOf(samples, "http_requests_total", { route, method: "GET", status: "200" }) ?? 0;
        assert.equal((await api.get(`/api/v1/projects/${project}/probes`)).status, 200);
        const unknown = uniqueName("nowhere");
        assert.equal((await api.get(`/api/v1/${unknown}`)).status, 404);
        assert.equal((await api.get(`/${unknown}`, { key: null })).status, 404);
        assert.equal(
          (await api.get(`/api/v1/projects/${project}/probes`, { key: null })).status,
          401,
        );
        const trpc = await api.get(`/trpc/projects.get?input=${JSON.stringify({ project })}`);
        assert.equal(trpc.status, 200);
        const { text } = await scrape(app, reader);
        const after = parse(text);
        assert.equal(count(after), count(before) + 1);
        const refused = { route, method: "GET", status: "401" };
        assert.equal(
          (valueOf(after, "http_requests_total", refused) ?? 0) -
            (valueOf(before, "http_requests_total", refused) ?? 0),
          1,
        );
        assert.ok(
          (valueOf(after, "http_requests_total", {
            route: "/trpc/projects.get",
            method: "GET",
            status: "200",
          }) ?? 0) >= 1,
        );
        assert.ok(
          (valueOf(after, "http_requests_total", {
            route: "other",
            method: "GET",
            status: "404",
          }) ?? 0) >= 2,
        );
        assert.ok(
          (valueOf(after, "http_request_duration_seconds_count", { route, method: "GET" }) ?? 0) >=
            1,
        );
        // Neither the unknown path nor the project's name is a label outside the probe series.
        assert.ok(!text.includes(unknown));
        for (const s of after) {
          if (s.name.startsWith("probe_")) continue;
          assert.ok(!JSON.stringify(s.labels).includes(project), `${s.name} names the project`);
          assert.ok(!(s.labels.route ?? "").includes(target.origin));
        }
      });

      await t.step("the runner, the pools, the queue and I'm alive deliveries", async () => {
        assert.equal(
          (await api.patch("/api/v1/settings/iam-alive", { channels: ["log"] })).status,
          200,
        );
        assert.equal((await api.post("/api/v1/settings/iam-alive/test", {})).status, 200);
        const samples = parse((await scrape(app, reader)).text);
        assert.equal(valueOf(samples, "runner_checks_total", { outcome: "up" }), 1);
        assert.equal(valueOf(samples, "runner_checks_total", { outcome: "down" }), 1);
        assert.equal(valueOf(samples, "runner_checks_total", { outcome: "blocked" }), 0);
        assert.equal(valueOf(samples, "runner_schedule_slip_seconds_count"), 2);
        assert.equal(valueOf(samples, "runner_runs_in_flight"), 0);
        assert.equal(valueOf(samples, "runner_runs_lost_total"), 0);
        assert.equal(valueOf(samples, "runner_runs_deferred_total"), 0);
        assert.equal(valueOf(samples, "runner_probes_scheduled"), 2);
        assert.equal(
          valueOf(samples, "iam_alive_deliveries_total", { channel: "log", outcome: "delivered" }),
          1,
        );
        const pool = backend === "pglite" ? "embedded" : "main";
        assert.ok((valueOf(samples, "db_pool_max_connections", { pool }) ?? 0) >= 1);
        assert.notEqual(valueOf(samples, "db_pool_in_use", { pool }), undefined);
        assert.notEqual(valueOf(samples, "db_pool_waiting", { pool }), undefined);
        for (const status of ["pending", "delivered", "failed"]) {
          assert.notEqual(valueOf(samples, "notifications", { status }), undefined, status);
        }
      });

      await t.step({
        name: "promtool check metrics finds nothing to say",
        ignore: !promtool && !inCi,
        fn: async () => {
          assert.ok(promtool, "promtool is missing: .ci/run installs it with apt-get");
          const { text } = await scrape(app, reader);
          const child = new Deno.Command("promtool", {
            args: ["check", "metrics"],
            stdin: "piped",
            stdout: "piped",
            stderr: "piped",
          }).spawn();
          const writer = child.stdin.getWriter();
          await writer.write(new TextEncoder().encode(text));
          await writer.close();
          const out = await child.output();
          const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
          assert.equal(out.code, 0, said);
          assert.equal(said.trim(), "");
        },
      });
    } finally {
      await target.close();
      await app.close();
    }
  });

  Deno.test(`METRICS_PER_PROBE=false leaves the per-probe series out [${backend}]`, async () => {
    const app = await appOn(backend, { perProbe: false });
    const api = new TestClient(app.handler);
    const target = await startTarget();
    try {
      const project = uniqueName("quiet");
      await api.post("/api/v1/projects", { project });
      await api.post(`/api/v1/projects/${project}/probes`, { url: `${target.origin}/ok` });
      await runOnce(app);
      const { status, text } = await scrape(app, reader);
      assert.equal(status, 200);
      const names = new Set(parse(text).map((s) => s.name));
      for (const name of ["probe_up", "probe_latency_seconds", "probe_state"]) {
        assert.ok(!names.has(name), name);
        assert.ok(!text.includes(`# TYPE ${name} `), name);
      }
      assert.ok(names.has("runner_checks_total"));
      assert.ok(!text.includes(project));
    } finally {
      await target.close();
      await app.close();
    }
  });

  Deno.test(`rate-limit refusals are counted by limit [${backend}]`, async () => {
    const now = 1_000_000;
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      config: { readOnlyApiKeys: [TEST_READ_KEY], rateLimitPerSecond: 1, authFailuresPerSecond: 1 },
      // Time stands still: each bucket holds its burst of 2 and no more.
      clock: { ...systemClock, now: () => now },
    });
    const api = new TestClient(app.handler);
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await api.get("/api/v1/projects")).status);
      for (let i = 0; i < 3; i++) {
        statuses.push((await api.get("/api/v1/projects", { key: "wrong-key-0000000" })).status);
      }
      assert.deepEqual(statuses, [200, 200, 429, 401, 401, 429]);
      const samples = parse((await scrape(app, reader)).text);
      assert.equal(valueOf(samples, "rate_limit_refusals_total", { limit: "key" }), 1);
      assert.equal(valueOf(samples, "rate_limit_refusals_total", { limit: "auth_failures" }), 1);
      assert.equal(
        valueOf(samples, "http_requests_total", {
          route: "/api/v1/projects",
          method: "GET",
          status: "429",
        }),
        2,
      );
    } finally {
      await app.close();
    }
  });
}
