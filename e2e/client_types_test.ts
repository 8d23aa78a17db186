// Type test: every `@ts-expect-error` below must be a type error (`deno check`, and so
// `deno test`, fails otherwise). The calls are also made, and the server must refuse each.
import assert from "node:assert/strict";
import { uniqueName } from "../server/testing/app.ts";
import { startLiveServer } from "../server/testing/live.ts";
import {
  createProbeClient,
  type Probe,
  ProbeApiError,
  type ProbeClient,
  type ProbeResult,
  type ProbeStats,
  type Project,
} from "../client/mod.ts";

/** Calls the type checker refuses; answers them as thunks so the test can run each. */
function refusedCalls(client: ProbeClient, project: string, probeId: string) {
  return {
    "project name of the wrong type": () =>
      // @ts-expect-error project must be a string
      client.projects.create({ project: 42 }),
    "unknown project status": () =>
      // @ts-expect-error status is "enabled" or "disabled"
      client.projects.update({ project, status: "paused" }),
    "missing project name on get": () =>
      // @ts-expect-error the project's name is required
      client.projects.get({}),
    "latency of the wrong type": () =>
      // @ts-expect-error latency is a number of milliseconds
      client.probes.create({ project, url: "http://127.0.0.1:9/", latency: "fast" }),
    "probe interval of the wrong type": () =>
      // @ts-expect-error interval_seconds is a number of seconds
      client.probes.update({ project, probeId, interval_seconds: "60" }),
    "probe timeout of the wrong type": () =>
      // @ts-expect-error timeout_ms is a number of milliseconds
      client.probes.create({ project, url: "http://127.0.0.1:9/", timeout_ms: "10s" }),
    "missing url on create": () =>
      // @ts-expect-error url is required
      client.probes.create({ project }),
    "missing probe id on get": () =>
      // @ts-expect-error probeId is required
      client.probes.get({ project }),
    "missing probe id on update": () =>
      // @ts-expect-error probeId is required
      client.probes.update({ project, url: "http://127.0.0.1:9/x" }),
    "header values of the wrong type": () =>
      // @ts-expect-error header values are strings
      client.probes.update({ project, probeId, headers: { "x-n": 1 } }),
    "interval of the wrong type": () =>
      // @ts-expect-error interval_hours is a number
      client.settings.updateIamAlive({ interval_hours: "6" }),
    "deliveries limit of the wrong type": () =>
      // @ts-expect-error limit is a number
      client.settings.listIamAliveDeliveries({ limit: "ten" }),
    "probe locations of the wrong type": () =>
      // @ts-expect-error locations is a list of location names
      client.probes.update({ project, probeId, locations: "local" }),
    "location filter of the wrong type": () =>
      // @ts-expect-error location is one location's name
      client.results.stats({ project, probeId, location: ["local"] }),
    "a location's name of the wrong type": () =>
      // @ts-expect-error name is a string
      client.locations.create({ name: 7 }),
    "unknown statistics window": () =>
      // @ts-expect-error window is 1h, 24h, 7d, 30d or 90d
      client.results.stats({ project, probeId, window: "2h" }),
    "results limit of the wrong type": () =>
      // @ts-expect-error limit is a number
      client.results.list({ project, probeId, limit: "all" }),
    "results before of the wrong type": () =>
      // @ts-expect-error before is an ISO time as a string
      client.results.list({ project, probeId, before: 1_700_000_000_000 }),
    "unknown channel": () =>
      // @ts-expect-error channels are mail, log or webhook
      client.settings.updateIamAlive({ channels: ["sms"] }),
  };
}

/** Results are typed too: wrong uses of them are type errors. */
export function typedResults(
  project: Project,
  probe: Probe,
  stats: ProbeStats,
  result: ProbeResult,
): void {
  // @ts-expect-error status is a string union, not a boolean
  const enabled: boolean = project.status;
  // @ts-expect-error method is one of the HTTP methods
  const method: "TRACE" = probe.method;
  const latency: number | null = probe.latency;
  // @ts-expect-error interval_seconds is null for the service-wide interval
  const interval: number = probe.interval_seconds;
  const timeout: number | null = probe.timeout_ms;
  // @ts-expect-error uptime is null when there were no runs
  const uptime: number = stats.uptime;
  // @ts-expect-error the outcome is up, degraded, down or blocked
  const outcome: "timeout" = result.outcome;
  const status: number | null = result.http_status;
  void [enabled, method, latency, interval, timeout, uptime, outcome, status];
}

Deno.test("calls the types refuse are refused by the server too", async (t) => {
  const server = await startLiveServer();
  try {
    const client = createProbeClient({ baseUrl: server.url, apiKey: server.apiKey });
    const project = uniqueName();
    await client.projects.create({ project });
    const { data } = await client.probes.create({ project, url: "http://127.0.0.1:9/" });
    for (const [name, call] of Object.entries(refusedCalls(client, project, data.probe_id))) {
      await t.step(name, async () => {
        const error = await call().then(() => null, (e) => e);
        assert.ok(error instanceof ProbeApiError, `expected a ProbeApiError, got ${error}`);
        assert.equal(error.status, 422, `${error.code}: ${error.message}`);
      });
    }
  } finally {
    await server.close();
  }
});

Deno.test("the entry point's documentation example type-checks and runs", async () => {
  const server = await startLiveServer();
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "test",
        "--doc",
        "--allow-net=127.0.0.1",
        "--allow-env",
        new URL("../client/mod.ts", import.meta.url).pathname,
      ],
      env: { PROBE_SERVICE_URL: server.url, SERVICE_API_KEY: server.apiKey, NO_COLOR: "1" },
      stdin: "null",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout);
    assert.ok(output.success, `${stdout}\n${new TextDecoder().decode(output.stderr)}`);
    assert.match(stdout, /probe created/);
    assert.match(stdout, /0 runs, uptime -, p95 - ms/);
    assert.match(stdout, /1 passed/);
  } finally {
    await server.close();
  }
});
