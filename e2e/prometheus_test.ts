/**
 * A real Prometheus (Debian's `prometheus`) scrapes a live server's `/metrics` with a read-only
 * key sent as `Authorization: Bearer`, and its query API shows the target up and a probe's
 * `probe_up`. And the standalone runner's `/metrics` on METRICS_PORT (PostgreSQL only).
 */
import assert from "node:assert/strict";
import { createPostgresDatabase, uniqueName } from "../server/testing/app.ts";
import { sparePort } from "../server/testing/cluster.ts";
import {
  restCall,
  RUNNER_ENTRY,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";

const WRITER_KEY = "e2e-writer-key-0123456789";
const READER_KEY = "e2e-reader-key-0123456789";
const hasPrometheus = new Deno.Command("sh", { args: ["-c", "command -v prometheus"] })
  .outputSync().success;
// CI installs Prometheus (.ci/run), so there a missing one is a failure, not a skipped test.
const inCi = Boolean(Deno.env.get("CI"));

/** Polls `check` until it gives a value; fails with `what` after `ms` (a bound, not a claim). */
async function until<T>(what: string, check: () => Promise<T | null>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await check().catch(() => null);
    if (value !== null) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** The series of an instant query, through Prometheus's HTTP API. */
async function query(base: string, promql: string) {
  const answer = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = await answer.json();
  assert.equal(body.status, "success", JSON.stringify(body));
  return body.data.result as { metric: Record<string, string>; value: [number, string] }[];
}

Deno.test({
  name: "Prometheus scrapes /metrics with a read-only bearer key: up == 1 and probe_up",
  ignore: !hasPrometheus && !inCi,
  fn: async () => {
    assert.ok(hasPrometheus, "prometheus is missing: .ci/run installs it with apt-get");
    const dir = await Deno.makeTempDir({ prefix: "prometheus-e2e-" });
    const target = await startTarget();
    let server: ServerProcess | undefined;
    let prometheus: Deno.ChildProcess | undefined;
    try {
      server = await startServerProcess({
        env: {
          DATA_DIR: `${dir}/data`,
          SERVICE_API_KEY: WRITER_KEY,
          SERVICE_API_KEYS_READONLY: READER_KEY,
          PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
          PROBE_INTERVAL_SECONDS: "10",
          LOG_LEVEL: "warn",
        },
      });
      const project = uniqueName("prom");
      assert.equal(
        (await restCall(server, WRITER_KEY, "POST", "/projects", { project })).status,
        201,
      );
      const made = await restCall(server, WRITER_KEY, "POST", `/projects/${project}/probes`, {
        url: `${target.origin}/ok`,
      });
      assert.equal(made.status, 201);
      const probeId = made.body.data.probe_id;

      const port = sparePort();
      await Deno.writeTextFile(
        `${dir}/prometheus.yml`,
        [
          "global:",
          "  scrape_interval: 1s",
          "  evaluation_interval: 1s",
          "scrape_configs:",
          "  - job_name: probe-service",
          "    metrics_path: /metrics",
          "    authorization:",
          "      type: Bearer",
          `      credentials: ${READER_KEY}`,
          "    static_configs:",
          `      - targets: ["127.0.0.1:${server.port}"]`,
          "",
        ].join("\n"),
      );
      prometheus = new Deno.Command("prometheus", {
        args: [
          `--config.file=${dir}/prometheus.yml`,
          `--storage.tsdb.path=${dir}/tsdb`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      const base = `http://127.0.0.1:${port}`;

      const up = await until("Prometheus sees the job up", async () => {
        const series = await query(base, 'up{job="probe-service"} == 1');
        return series.length === 1 ? series[0] : null;
      });
      assert.equal(up.value[1], "1");
      const probeUp = await until("Prometheus has the probe's probe_up", async () => {
        const series = await query(
          base,
          `probe_up{job="probe-service",project="${project}",probe_id="${probeId}"}`,
        );
        return series.length === 1 ? series[0] : null;
      });
      assert.equal(probeUp.value[1], "1");
      // The process's own series came along (prom-client's defaults under Deno).
      const rss = await query(base, 'process_resident_memory_bytes{job="probe-service"}');
      assert.equal(rss.length, 1);
      assert.ok(Number(rss[0].value[1]) > 0);
    } finally {
      prometheus?.kill("SIGKILL");
      await prometheus?.status;
      await server?.stop();
      await target.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "the standalone runner serves /metrics on METRICS_PORT with the server's keys",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    const target = await startTarget();
    const metricsPort = sparePort();
    let runner: ServerProcess | undefined;
    let server: ServerProcess | undefined;
    try {
      // The server makes the schema and the probe; the runner alone runs it.
      server = await startServerProcess({
        env: { DATABASE_URL: url, SERVICE_API_KEY: WRITER_KEY, RUNNER: "off", LOG_LEVEL: "warn" },
      });
      const project = uniqueName("runner");
      await restCall(server, WRITER_KEY, "POST", "/projects", { project });
      await restCall(server, WRITER_KEY, "POST", `/projects/${project}/probes`, {
        url: `${target.origin}/ok`,
      });
      runner = await startServerProcess({
        entry: RUNNER_ENTRY,
        env: {
          DATABASE_URL: url,
          SERVICE_API_KEY: WRITER_KEY,
          SERVICE_API_KEYS_READONLY: READER_KEY,
          METRICS_PORT: String(metricsPort),
          PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
          LOG_LEVEL: "info",
        },
        waitReady: false,
        output: "capture",
      });
      const metrics = `http://127.0.0.1:${metricsPort}/metrics`;
      const text = await until("the runner has run the probe", async () => {
        const answer = await fetch(metrics, { headers: { authorization: `Bearer ${READER_KEY}` } });
        const body = await answer.text();
        if (answer.status !== 200) return null;
        return /^runner_checks_total\{outcome="up"\} [1-9]/m.test(body) ? body : null;
      });
      assert.match(text, /^db_pool_max_connections\{pool="main"\} 4$/m);
      assert.match(text, /^runner_runs_in_flight \d+$/m);
      // Its probes run in a thread of their own, whose heap is told apart.
      assert.match(text, /^runner_thread_heap_used_bytes [1-9]\d{5,}$/m);
      assert.match(text, /^runner_thread_heap_total_bytes [1-9]\d{5,}$/m);
      assert.match(text, /^process_resident_memory_bytes \d+/m);
      assert.ok(!text.includes("http_requests_total"), "the runner serves no API");
      const refused = await fetch(metrics);
      assert.equal(refused.status, 401);
      assert.equal((await refused.json()).error.code, "unauthorized");
      const other = await fetch(`http://127.0.0.1:${metricsPort}/api/v1/projects`, {
        headers: { "x-service-api-key": WRITER_KEY },
      });
      assert.equal(other.status, 404);
      await other.body?.cancel();
      runner.kill("SIGTERM");
      assert.equal((await runner.status).code, 0, runner.output());
    } finally {
      runner?.kill("SIGKILL");
      await runner?.status;
      await server?.stop();
      await target.close();
      await drop();
    }
  },
});

Deno.test("the standalone runner's METRICS_PORT needs a key to accept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "runner-metrics-" });
  try {
    const runner = await startServerProcess({
      entry: RUNNER_ENTRY,
      env: {
        DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
        DATA_DIR: dir,
        SERVICE_API_KEY: "",
        SERVICE_API_KEYS_READONLY: "",
        METRICS_PORT: String(sparePort()),
      },
      waitReady: false,
      output: "capture",
    });
    assert.equal((await runner.status).code, 1);
    assert.match(runner.output(), /METRICS_PORT needs a key/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
