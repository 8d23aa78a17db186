import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "./config.ts";

Deno.test("with nothing set, the defaults serve on 127.0.0.1:8000 from ./data", () => {
  assert.deepEqual(parseConfig({}), {
    port: 8000,
    host: "127.0.0.1",
    apiKeys: undefined,
    databaseUrl: undefined,
    dataDir: "./data",
    logLevel: "info",
    probeIntervalSeconds: 60,
    probeTimeoutMs: 10_000,
    probeAllowNetworks: [],
    probeConcurrency: 200,
    resultsRetentionDays: 7,
    runner: true,
  });
});

Deno.test("the runner's settings are read from their variables", () => {
  const c = parseConfig({
    PROBE_INTERVAL_SECONDS: "10",
    PROBE_TIMEOUT_MS: "2500",
    PROBE_ALLOW_NETWORKS: "127.0.0.0/8, 10.0.0.0/8",
    PROBE_CONCURRENCY: "50",
    RESULTS_RETENTION_DAYS: "30",
    RUNNER: "off",
  });
  assert.equal(c.probeIntervalSeconds, 10);
  assert.equal(c.probeTimeoutMs, 2500);
  assert.deepEqual(c.probeAllowNetworks, ["127.0.0.0/8", "10.0.0.0/8"]);
  assert.equal(c.probeConcurrency, 50);
  assert.equal(c.resultsRetentionDays, 30);
  assert.equal(c.runner, false);
});

Deno.test("empty variables count as unset", () => {
  assert.equal(parseConfig({ PORT: "", DATABASE_URL: " " }).port, 8000);
});

Deno.test("SERVICE_API_KEY holds comma-separated keys for rotation", () => {
  assert.deepEqual(parseConfig({ SERVICE_API_KEY: " first-key-1, second-key-2 ," }).apiKeys, [
    "first-key-1",
    "second-key-2",
  ]);
});

Deno.test("a bad value stops start-up with a message naming the variable", () => {
  const cases: Record<string, string>[] = [
    { PORT: "eighty" },
    { PORT: "70000" },
    { DATABASE_URL: "mysql://x" },
    { LOG_LEVEL: "loud" },
    { SERVICE_API_KEY: "," },
    { SERVICE_API_KEY: "short" },
    { PROBE_INTERVAL_SECONDS: "9" },
    { PROBE_INTERVAL_SECONDS: "86401" },
    { PROBE_TIMEOUT_MS: "fast" },
    { PROBE_ALLOW_NETWORKS: "127.0.0.0/8,intranet" },
    { PROBE_CONCURRENCY: "0" },
    { RESULTS_RETENTION_DAYS: "0" },
    { RUNNER: "maybe" },
  ];
  for (const env of cases) {
    const [name] = Object.keys(env);
    assert.throws(() => parseConfig(env), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, new RegExp(name));
      return true;
    });
  }
});
