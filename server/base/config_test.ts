import assert from "node:assert/strict";
import {
  ConfigError,
  MAX_PUBLIC_URL_LENGTH,
  parseConfig,
  parseRemoteRunnerConfig,
  publicUrlOf,
} from "./config.ts";

Deno.test("with nothing set, the defaults serve on 127.0.0.1:8000 from ./data", () => {
  assert.deepEqual(parseConfig({}), {
    port: 8000,
    host: "127.0.0.1",
    publicUrl: undefined,
    apiKeys: undefined,
    readOnlyApiKeys: [],
    probeSecretHeaders: [],
    databaseUrl: undefined,
    databasePoolSize: 10,
    databaseConnectTimeoutMs: 1500,
    databaseStatementTimeoutMs: 1500,
    databaseQueryDeadlineMs: 2000,
    dataDir: "./data",
    connections: {
      maxConnections: undefined,
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
      idleTimeoutMs: 5_000,
    },
    logLevel: "info",
    logSummarySeconds: 10,
    maxAnswerBytes: 16 * 1024 * 1024,
    rateLimitPerSecond: 1000,
    authFailuresPerSecond: 10,
    trustedProxies: [],
    corsOrigins: [],
    probeIntervalSeconds: 60,
    probeTimeoutMs: 10_000,
    probeAllowNetworks: [],
    probeCa: undefined,
    probeConcurrency: 1000,
    probeHostConcurrency: 250,
    resultsRetentionDays: 7,
    auditRetentionDays: 400,
    runner: true,
    runnerLocation: "local",
    metricsPerProbe: true,
    metricsPort: undefined,
    notificationLeaseMs: 60_000,
    delivery: { concurrency: 64, perTarget: 16, breakerFailures: 3 },
    iamAlive: {},
    sessions: { idleMs: 12 * 3_600_000, absoluteMs: 7 * 24 * 3_600_000 },
  });
});

Deno.test("dashboard sessions' lifetimes and single sign-on: all three OIDC settings or none", () => {
  const sessions = parseConfig({ SESSION_IDLE_MINUTES: "30", SESSION_MAX_HOURS: "24" }).sessions;
  assert.deepEqual(sessions, { idleMs: 30 * 60_000, absoluteMs: 24 * 3_600_000 });
  assert.throws(() => parseConfig({ SESSION_IDLE_MINUTES: "0" }), /SESSION_IDLE_MINUTES/);
  const oidc = {
    OIDC_ISSUER: "https://sso.example.com/realms/acme",
    OIDC_CLIENT_ID: "probe-monitor",
    OIDC_CLIENT_SECRET: "s3cret-value",
  };
  assert.deepEqual(
    parseConfig({ ...oidc, OIDC_ADMIN_GROUPS: "ops, sre", OIDC_ALLOWED_DOMAINS: "Example.COM" })
      .oidc,
    {
      issuer: "https://sso.example.com/realms/acme",
      clientId: "probe-monitor",
      clientSecret: "s3cret-value",
      name: "sso.example.com",
      scopes: "openid email profile",
      defaultRole: null,
      roleClaim: "groups",
      adminGroups: ["ops", "sre"],
      editorGroups: [],
      viewerGroups: [],
      allowedDomains: ["example.com"],
      projectsClaim: undefined,
    },
  );
  assert.equal(parseConfig({ ...oidc, OIDC_DEFAULT_ROLE: "viewer" }).oidc?.defaultRole, "viewer");
  assert.equal(parseConfig({}).oidc, undefined);
  for (const missing of ["OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET"] as const) {
    const { [missing]: _, ...rest } = oidc;
    assert.throws(() => parseConfig(rest), ConfigError, missing);
  }
  assert.throws(() => parseConfig({ ...oidc, OIDC_ISSUER: "sso.example.com" }), /OIDC_ISSUER/);
  assert.throws(() => parseConfig({ ...oidc, OIDC_DEFAULT_ROLE: "root" }), /OIDC_DEFAULT_ROLE/);
  // The secret is never in a refusal's message.
  try {
    parseConfig({ ...oidc, OIDC_ISSUER: "nope" });
  } catch (error) {
    assert.ok(!(error as Error).message.includes("s3cret-value"));
  }
});

Deno.test("PUBLIC_URL: an http(s) URL, its trailing slash dropped; the bound address by default", () => {
  assert.equal(
    parseConfig({ PUBLIC_URL: "https://probes.example.com/" }).publicUrl,
    "https://probes.example.com",
  );
  assert.equal(
    parseConfig({ PUBLIC_URL: "https://example.com/monitor/" }).publicUrl,
    "https://example.com/monitor",
  );
  for (
    const bad of [
      "probes.example.com",
      "ftp://probes.example.com",
      "https://user:pw@probes.example.com",
      "https://probes.example.com/?a=1",
      "https://probes.example.com/#top",
      `https://probes.example.com/${"a".repeat(MAX_PUBLIC_URL_LENGTH)}`,
    ]
  ) {
    assert.throws(() => parseConfig({ PUBLIC_URL: bad }), (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /^Invalid configuration: PUBLIC_URL: must be/);
      assert.ok(!e.message.includes("pw@"), "the value is not echoed");
      return true;
    });
  }
  const bound = (hostname: string) => publicUrlOf({}, { hostname, port: 8123 });
  assert.equal(bound("127.0.0.1"), "http://127.0.0.1:8123");
  assert.equal(bound("0.0.0.0"), "http://127.0.0.1:8123");
  assert.equal(bound("::"), "http://[::1]:8123");
  assert.equal(bound("::1"), "http://[::1]:8123");
  assert.equal(
    publicUrlOf({ publicUrl: "https://p.example" }, { hostname: "0.0.0.0", port: 1 }),
    "https://p.example",
  );
});

Deno.test("METRICS_PER_PROBE turns the per-probe series off; METRICS_PORT is a port", () => {
  assert.equal(parseConfig({ METRICS_PER_PROBE: "false" }).metricsPerProbe, false);
  assert.equal(parseConfig({ METRICS_PER_PROBE: "true" }).metricsPerProbe, true);
  assert.equal(parseConfig({ METRICS_PER_PROBE: " " }).metricsPerProbe, true);
  assert.equal(parseConfig({ METRICS_PORT: "9464" }).metricsPort, 9464);
  assert.equal(parseConfig({ METRICS_PORT: "0" }).metricsPort, 0);
  assert.equal(parseConfig({ METRICS_PORT: "" }).metricsPort, undefined);
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
  assert.equal(c.probeHostConcurrency, 13, "a quarter of PROBE_CONCURRENCY, rounded up");
  assert.equal(c.resultsRetentionDays, 30);
  assert.equal(c.runner, false);
  assert.equal(c.runnerLocation, "local");
  assert.equal(parseConfig({ RUNNER_LOCATION: "office-1" }).runnerLocation, "office-1");
});

Deno.test("PROBE_HOST_CONCURRENCY is read, at most PROBE_CONCURRENCY, and bounded", () => {
  assert.equal(parseConfig({ PROBE_HOST_CONCURRENCY: "7" }).probeHostConcurrency, 7);
  assert.equal(
    parseConfig({ PROBE_CONCURRENCY: "10", PROBE_HOST_CONCURRENCY: "40" }).probeHostConcurrency,
    10,
  );
  assert.equal(parseConfig({ PROBE_CONCURRENCY: "1" }).probeHostConcurrency, 1);
  for (const bad of ["0", "-1", "2.5", "x", "10001"]) {
    assert.throws(() => parseConfig({ PROBE_HOST_CONCURRENCY: bad }), /PROBE_HOST_CONCURRENCY/);
  }
});

Deno.test("the connection settings are read from their variables", () => {
  const c = parseConfig({
    MAX_CONNECTIONS: "5000",
    HEADERS_TIMEOUT_MS: "2000",
    BODY_TIMEOUT_MS: "30000",
    IDLE_TIMEOUT_MS: "1000",
  });
  assert.deepEqual(c.connections, {
    maxConnections: 5000,
    headersTimeoutMs: 2000,
    bodyTimeoutMs: 30_000,
    idleTimeoutMs: 1000,
  });
});

Deno.test("NOTIFICATION_LEASE_MS sets the deliverer's claim lease, 1000 to 3600000", () => {
  assert.equal(parseConfig({ NOTIFICATION_LEASE_MS: "2000" }).notificationLeaseMs, 2000);
  assert.equal(parseConfig({ NOTIFICATION_LEASE_MS: "1000" }).notificationLeaseMs, 1000);
  assert.equal(parseConfig({ NOTIFICATION_LEASE_MS: "3600000" }).notificationLeaseMs, 3_600_000);
  assert.equal(parseConfig({ NOTIFICATION_LEASE_MS: "" }).notificationLeaseMs, 60_000);
});

Deno.test("NOTIFY_* set the deliverer's slots, a target's share and its breaker", () => {
  assert.deepEqual(parseConfig({}).delivery, {
    concurrency: 64,
    perTarget: 16,
    breakerFailures: 3,
  });
  assert.deepEqual(
    parseConfig({
      NOTIFY_CONCURRENCY: "50",
      NOTIFY_TARGET_CONCURRENCY: "2",
      NOTIFY_BREAKER_FAILURES: "5",
    }).delivery,
    { concurrency: 50, perTarget: 2, breakerFailures: 5 },
  );
  // A target's share is never more than all the slots.
  assert.equal(
    parseConfig({ NOTIFY_CONCURRENCY: "3", NOTIFY_TARGET_CONCURRENCY: "8" }).delivery.perTarget,
    3,
  );
  for (const [name, value] of [["NOTIFY_CONCURRENCY", "0"], ["NOTIFY_TARGET_CONCURRENCY", "x"]]) {
    assert.throws(() => parseConfig({ [name]: value }), new RegExp(name));
  }
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

Deno.test("SERVICE_API_KEYS_READONLY holds comma-separated read-only keys, none by default", () => {
  const config = parseConfig({
    SERVICE_API_KEY: "writer-key-1",
    SERVICE_API_KEYS_READONLY: " reader-key-1, reader-key-2 ,",
  });
  assert.deepEqual(config.apiKeys, ["writer-key-1"]);
  assert.deepEqual(config.readOnlyApiKeys, ["reader-key-1", "reader-key-2"]);
  assert.deepEqual(parseConfig({}).readOnlyApiKeys, []);
  assert.deepEqual(parseConfig({ SERVICE_API_KEYS_READONLY: " " }).readOnlyApiKeys, []);
});

Deno.test("a key in both SERVICE_API_KEY and SERVICE_API_KEYS_READONLY stops start-up", () => {
  assert.throws(
    () =>
      parseConfig({
        SERVICE_API_KEY: "writer-key-1,shared-key-1",
        SERVICE_API_KEYS_READONLY: "reader-key-1,shared-key-1",
      }),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /SERVICE_API_KEYS_READONLY/);
      // The key itself is a secret: never in the message.
      assert.doesNotMatch(e.message, /shared-key-1/);
      return true;
    },
  );
});

Deno.test("a bad value stops start-up with a message naming the variable", () => {
  const cases: Record<string, string>[] = [
    { PORT: "eighty" },
    { PORT: "70000" },
    { DATABASE_URL: "mysql://x" },
    { LOG_LEVEL: "loud" },
    { SERVICE_API_KEY: "," },
    { SERVICE_API_KEY: "short" },
    { SERVICE_API_KEYS_READONLY: "," },
    { SERVICE_API_KEYS_READONLY: "short" },
    { DATABASE_POOL_SIZE: "0" },
    { DATABASE_CONNECT_TIMEOUT_MS: "soon" },
    { DATABASE_STATEMENT_TIMEOUT_MS: "-1" },
    { DATABASE_QUERY_DEADLINE_MS: "99" },
    { DATABASE_QUERY_DEADLINE_MS: "1500" }, // not longer than the statement timeout
    { RATE_LIMIT_PER_SECOND: "-5" },
    { CORS_ORIGINS: "https://app.example.com/path" },
    { CORS_ORIGINS: "*" },
    { PROBE_INTERVAL_SECONDS: "9" },
    { PROBE_INTERVAL_SECONDS: "86401" },
    { PROBE_TIMEOUT_MS: "fast" },
    { PROBE_ALLOW_NETWORKS: "127.0.0.0/8,intranet" },
    { PROBE_CONCURRENCY: "0" },
    { RESULTS_RETENTION_DAYS: "0" },
    { RUNNER: "maybe" },
    { RUNNER_LOCATION: "-eu" },
    { RUNNER_LOCATION: "eu west" },
    { METRICS_PER_PROBE: "no" },
    { METRICS_PORT: "70000" },
    { METRICS_PORT: "nine" },
    { METRICS_PORT: "-1" },
    { MAX_CONNECTIONS: "0" },
    { MAX_CONNECTIONS: "many" },
    { HEADERS_TIMEOUT_MS: "99" },
    { BODY_TIMEOUT_MS: "1.5" },
    { IDLE_TIMEOUT_MS: "-1" },
    { NOTIFICATION_LEASE_MS: "999" },
    { NOTIFICATION_LEASE_MS: "3600001" },
    { NOTIFICATION_LEASE_MS: "1.5e3x" },
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

Deno.test("CORS_ORIGINS lists origins; RATE_LIMIT_PER_SECOND=0 turns the limit off", () => {
  const config = parseConfig({
    CORS_ORIGINS: "https://app.example.com, http://localhost:5173",
    RATE_LIMIT_PER_SECOND: "0",
  });
  assert.deepEqual(config.corsOrigins, ["https://app.example.com", "http://localhost:5173"]);
  assert.equal(config.rateLimitPerSecond, 0);
});

Deno.test("TRUSTED_PROXIES takes addresses and ranges; failed key checks are limited by default", () => {
  const config = parseConfig({ TRUSTED_PROXIES: "10.0.0.1, 192.168.0.0/16, ::1" });
  assert.deepEqual(config.trustedProxies, ["10.0.0.1", "192.168.0.0/16", "::1"]);
  assert.equal(config.authFailuresPerSecond, 10);
  assert.deepEqual(parseConfig({}).trustedProxies, []);
  assert.throws(
    () => parseConfig({ TRUSTED_PROXIES: "10.0.0.1, proxy.local" }),
    /TRUSTED_PROXIES: "proxy.local" is not an address or a CIDR range/,
  );
});

const webhook = {
  IAM_ALIVE_WEBHOOK_URL: "https://hc.example.test/ping/abc",
  IAM_ALIVE_WEBHOOK_SECRET: "whsec-0123456789abcdef",
};
const mail = {
  SMTP_URL: "smtps://monitor:p%40ss@mail.example.test:465",
  MAIL_FROM: "Probe monitor <monitor@example.test>",
  MAIL_TO: "ops@example.test, oncall@example.test",
};

function rejects(env: Record<string, string>): string {
  try {
    parseConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.message;
  }
  assert.fail("the configuration was accepted");
}

Deno.test("config: no I'm alive variables configure no channel", () => {
  assert.deepEqual(parseConfig({}).iamAlive, {});
  assert.deepEqual(parseConfig({ SMTP_URL: "", IAM_ALIVE_WEBHOOK_URL: " " }).iamAlive, {});
});

Deno.test("config: the webhook and mail variables configure their channels", () => {
  assert.deepEqual(parseConfig({ ...webhook, ...mail }).iamAlive, {
    webhook: { url: webhook.IAM_ALIVE_WEBHOOK_URL, secret: webhook.IAM_ALIVE_WEBHOOK_SECRET },
    mail: {
      smtpUrl: mail.SMTP_URL,
      from: mail.MAIL_FROM,
      to: ["ops@example.test", "oncall@example.test"],
    },
  });
  assert.deepEqual(
    parseConfig({ IAM_ALIVE_WEBHOOK_URL: "http://127.0.0.1:9000/hook" }).iamAlive,
    { webhook: { url: "http://127.0.0.1:9000/hook", secret: undefined } },
  );
});

Deno.test("config: a bad value stops start-up and names the variable", () => {
  assert.match(rejects({ IAM_ALIVE_WEBHOOK_URL: "ftp://x.test/" }), /IAM_ALIVE_WEBHOOK_URL/);
  assert.match(
    rejects({ ...webhook, IAM_ALIVE_WEBHOOK_SECRET: "short" }),
    /IAM_ALIVE_WEBHOOK_SECRET/,
  );
  assert.match(rejects({ ...mail, MAIL_TO: "ops@example.test, nobody" }), /MAIL_TO/);
  assert.match(rejects({ ...mail, MAIL_FROM: "monitor" }), /MAIL_FROM/);
});

Deno.test("config: a bad SMTP_URL is named without its credentials", () => {
  const message = rejects({ ...mail, SMTP_URL: "http://monitor:hunter2-secret@mail.test/" });
  assert.match(message, /SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/);
  assert.doesNotMatch(message, /hunter2/);
});

Deno.test("config: half a channel's configuration names what is missing", () => {
  assert.match(rejects({ SMTP_URL: mail.SMTP_URL }), /MAIL_FROM: is required when SMTP_URL is set/);
  assert.match(rejects({ MAIL_TO: mail.MAIL_TO }), /SMTP_URL: is required when MAIL_TO is set/);
  // Without MAIL_TO the server's mail serves mail targets; the I'm alive mail channel is not set.
  const targetsOnly = parseConfig({ SMTP_URL: mail.SMTP_URL, MAIL_FROM: mail.MAIL_FROM });
  assert.deepEqual(targetsOnly.mail, { smtpUrl: mail.SMTP_URL, from: mail.MAIL_FROM });
  assert.equal(targetsOnly.iamAlive.mail, undefined);
  assert.match(
    rejects({ IAM_ALIVE_WEBHOOK_SECRET: webhook.IAM_ALIVE_WEBHOOK_SECRET }),
    /IAM_ALIVE_WEBHOOK_URL: is required when IAM_ALIVE_WEBHOOK_SECRET is set/,
  );
});

Deno.test("the query deadline must outlast the statement timeout, unless there is none", () => {
  const c = parseConfig({
    DATABASE_STATEMENT_TIMEOUT_MS: "5000",
    DATABASE_QUERY_DEADLINE_MS: "6000",
  });
  assert.equal(c.databaseQueryDeadlineMs, 6000);
  assert.throws(
    () => parseConfig({ DATABASE_STATEMENT_TIMEOUT_MS: "5000" }),
    /DATABASE_QUERY_DEADLINE_MS: must be longer than DATABASE_STATEMENT_TIMEOUT_MS \(5000\)/,
  );
  const untimed = parseConfig({
    DATABASE_STATEMENT_TIMEOUT_MS: "0",
    DATABASE_QUERY_DEADLINE_MS: "100",
  });
  assert.equal(untimed.databaseQueryDeadlineMs, 100);
});

Deno.test("PROBE_SECRET_HEADERS lists header names, lower-cased; none by default", () => {
  assert.deepEqual(parseConfig({}).probeSecretHeaders, []);
  assert.deepEqual(
    parseConfig({ PROBE_SECRET_HEADERS: "X-Tenant-Pin, x-customer-id" }).probeSecretHeaders,
    ["x-tenant-pin", "x-customer-id"],
  );
  assert.throws(
    () => parseConfig({ PROBE_SECRET_HEADERS: "X-Pin,not a header" }),
    /PROBE_SECRET_HEADERS: must be a comma-separated list of header names/,
  );
});

Deno.test("the remote runner's settings: SERVICE_URL and LOCATION_TOKEN required", () => {
  const c = parseRemoteRunnerConfig({
    SERVICE_URL: "https://probes.example.com/some/path",
    LOCATION_TOKEN: "plt_abc",
    PROBE_ALLOW_NETWORKS: "10.0.0.0/8",
    RESULT_BUFFER_MINUTES: "5",
  });
  assert.equal(c.serviceUrl, "https://probes.example.com");
  assert.equal(c.token, "plt_abc");
  assert.deepEqual(c.probeAllowNetworks, ["10.0.0.0/8"]);
  assert.equal(c.concurrency, 200);
  assert.equal(c.bufferMax, 100_000);
  assert.equal(c.bufferMaxAgeMs, 300_000);
  assert.throws(() => parseRemoteRunnerConfig({}), /SERVICE_URL.*LOCATION_TOKEN/);
  for (
    const bad of [
      { SERVICE_URL: "ftp://x", LOCATION_TOKEN: "plt_a" },
      { SERVICE_URL: "https://x", LOCATION_TOKEN: "an-api-key" },
      { SERVICE_URL: "https://x", LOCATION_TOKEN: "plt_a", RESULT_BUFFER_MAX: "10" },
      { SERVICE_URL: "https://x", LOCATION_TOKEN: "plt_a", RUNNER_ID: "a b" },
    ]
  ) {
    assert.throws(() => parseRemoteRunnerConfig(bad), ConfigError, JSON.stringify(bad));
  }
});
