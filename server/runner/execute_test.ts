import assert from "node:assert/strict";
import { probeExpect } from "@probe/shared";
import { type ExecuteOptions, executeProbe, type ProbeTarget } from "./execute.ts";
import { MAX_BODY_BYTES, outboundRequest } from "../base/outbound/request.ts";
import {
  createNetworkPolicy,
  parseNetworks,
  type Resolver,
} from "../base/outbound/network_policy.ts";
import { closedPort, startTarget, type Target } from "../testing/target_server.ts";

const loopbackAllowed = createNetworkPolicy(parseNetworks("127.0.0.0/8"));
const noSleep = () => Promise.resolve();

function probe(url: string, fields: Partial<ProbeTarget> = {}): ProbeTarget {
  return { url, method: "GET", headers: {}, body: null, latency: null, expect: null, ...fields };
}

function options(over: Partial<ExecuteOptions> = {}): ExecuteOptions {
  return { policy: loopbackAllowed, timeoutMs: 5_000, sleep: noSleep, ...over };
}

async function withTarget(fn: (t: Target) => Promise<void>, tls = false) {
  const dir = new URL("./testdata/", import.meta.url);
  const target = await startTarget(
    tls
      ? {
        tls: {
          cert: await Deno.readTextFile(new URL("probe.test.pem", dir)),
          key: await Deno.readTextFile(new URL("probe.test.key", dir)),
        },
      }
      : {},
  );
  try {
    await fn(target);
  } finally {
    await target.close();
  }
}

Deno.test("a target answering 200 is up, with its status and address", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(probe(`${t.origin}/ok`), options({ now: () => 1_000 }));
    assert.equal(run.outcome, "up");
    assert.equal(run.httpStatus, 200);
    assert.equal(run.error, null);
    assert.equal(run.address, "127.0.0.1");
    assert.deepEqual(run.startedAt, new Date(1_000));
    assert.ok(run.durationMs >= 0);
    assert.equal(run.failedChecks, null, "no expect, no checks");
  });
});

Deno.test("a target slower than the probe's latency is degraded", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(probe(`${t.origin}/slow?ms=150`, { latency: 20 }), options());
    assert.equal(run.outcome, "degraded");
    assert.equal(run.httpStatus, 200);
    assert.ok(run.durationMs >= 150 - 5);
    assert.equal(run.error, "slower than 20 ms");
  });
});

Deno.test("a 500 is down with its status", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(probe(`${t.origin}/status/500`), options());
    assert.equal(run.outcome, "down");
    assert.equal(run.httpStatus, 500);
    assert.equal(run.error, "HTTP 500");
    assert.equal(t.hits.length, 1, "an HTTP error is not retried");
  });
});

Deno.test("a target that never answers is down after the timeout, not retried", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(probe(`${t.origin}/hang`), options({ timeoutMs: 200 }));
    assert.equal(run.outcome, "down");
    assert.equal(run.httpStatus, null);
    assert.equal(run.error, "timeout after 200 ms");
    assert.equal(t.hits.length, 1);
  });
});

Deno.test("a refused connection is retried once after a pause, then down", async () => {
  const pauses: number[] = [];
  const run = await executeProbe(
    probe(`http://127.0.0.1:${closedPort()}/`),
    options({ sleep: (ms) => (pauses.push(ms), Promise.resolve()), retryPauseMs: 250 }),
  );
  assert.equal(run.outcome, "down");
  assert.equal(run.error, "connection refused");
  assert.equal(run.address, "127.0.0.1");
  assert.deepEqual(pauses, [250]);
});

Deno.test("a chain of 5 redirects is followed; a sixth is too many", async () => {
  await withTarget(async (t) => {
    const five = await executeProbe(probe(`${t.origin}/redirect/5`), options());
    assert.equal(five.outcome, "up");
    assert.deepEqual(t.hits.map((h) => h.path), [
      "/redirect/5",
      "/redirect/4",
      "/redirect/3",
      "/redirect/2",
      "/redirect/1",
      "/ok",
    ]);
    const six = await executeProbe(probe(`${t.origin}/redirect/6`), options());
    assert.equal(six.outcome, "down");
    assert.equal(six.error, "more than 5 redirects");
  });
});

Deno.test("a redirect to a forbidden address is blocked before any connection to it", async () => {
  await withTarget(async (t) => {
    const connected: string[] = [];
    const resolve: Resolver = (host) => {
      connected.push(host);
      return Promise.resolve(["169.254.169.254"]);
    };
    const to = encodeURIComponent("http://metadata.internal/latest/meta-data/");
    const run = await executeProbe(
      probe(`${t.origin}/redirect-to?url=${to}`),
      options({ resolve }),
    );
    assert.equal(run.outcome, "blocked");
    assert.equal(run.address, "169.254.169.254");
    assert.equal(run.error, "blocked: 169.254.169.254 is link-local (not in PROBE_ALLOW_NETWORKS)");
    assert.equal(run.httpStatus, null);
    assert.deepEqual(connected, ["metadata.internal"]);
    assert.equal(t.hits.length, 1, "only the first hop reached the target");
  });
});

Deno.test("a redirect to loopback in decimal form is blocked when loopback is not open", async () => {
  await withTarget(async (t) => {
    // The first hop is allowed by name; the second names loopback as a bare decimal number.
    const policy = createNetworkPolicy([`127.0.0.1/32`]);
    const to = encodeURIComponent(`http://2130706434:${t.port}/ok`);
    const run = await executeProbe(
      probe(`${t.origin}/redirect-to?url=${to}`),
      options({ policy }),
    );
    assert.equal(run.outcome, "blocked");
    assert.equal(run.address, "127.0.0.2");
    assert.equal(t.hits.length, 1);
  });
});

Deno.test("with loopback not allowed a loopback probe is blocked and the target sees nothing", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(
      probe(`${t.origin}/ok`),
      options({ policy: createNetworkPolicy() }),
    );
    assert.equal(run.outcome, "blocked");
    assert.equal(run.address, "127.0.0.1");
    assert.equal(t.hits.length, 0);
  });
});

Deno.test("a host name is connected to at the checked address, whatever DNS says later", async () => {
  await withTarget(async (t) => {
    // A rebinding resolver: the first answer is the allowed one, later answers are not.
    let calls = 0;
    const resolve: Resolver = () =>
      Promise.resolve([calls++ === 0 ? "127.0.0.1" : "169.254.169.254"]);
    const run = await executeProbe(
      probe(`http://rebind.test:${t.port}/echo`),
      options({ resolve }),
    );
    assert.equal(run.outcome, "up");
    assert.equal(calls, 1, "resolved once per hop");
    assert.equal(t.hits[0].headers.host, `rebind.test:${t.port}`);
  });
});

Deno.test("a JSON body and headers reach the target as the probe defines them", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(
      probe(`${t.origin}/echo`, {
        method: "POST",
        headers: { "X-Trace": "abc", Authorization: "Bearer s3cret-token" },
        body: { hello: ["world", 1] },
      }),
      options(),
    );
    assert.equal(run.outcome, "up");
    const [hit] = t.hits;
    assert.equal(hit.method, "POST");
    assert.equal(hit.headers["x-trace"], "abc");
    assert.equal(hit.headers["content-type"], "application/json");
    assert.equal(hit.headers.authorization, "Bearer s3cret-token");
    assert.deepEqual(JSON.parse(hit.body), { hello: ["world", 1] });
    assert.ok(!JSON.stringify(run).includes("s3cret"), "no secret in the result");
  });
});

Deno.test("a string body goes as-is, and the probe's content type wins", async () => {
  await withTarget(async (t) => {
    await executeProbe(
      probe(`${t.origin}/echo`, { method: "PUT", body: "plain text" }),
      options(),
    );
    await executeProbe(
      probe(`${t.origin}/echo`, {
        method: "POST",
        headers: { "content-type": "application/vnd.x+json" },
        body: [1, 2],
      }),
      options(),
    );
    assert.equal(t.hits[0].body, "plain text");
    assert.equal(t.hits[0].headers["content-type"], undefined);
    assert.equal(t.hits[1].body, "[1,2]");
    assert.equal(t.hits[1].headers["content-type"], "application/vnd.x+json");
  });
});

Deno.test("credentials are not carried across a redirect to another origin", async () => {
  await withTarget(async (other) => {
    await withTarget(async (t) => {
      const to = encodeURIComponent(`http://localhost:${other.port}/echo`);
      const run = await executeProbe(
        probe(`${t.origin}/redirect-to?url=${to}&status=307`, {
          method: "POST",
          headers: { Authorization: "Bearer x", Cookie: "a=b", "X-Keep": "1" },
          body: { a: 1 },
        }),
        options({ resolve: () => Promise.resolve(["127.0.0.1"]) }),
      );
      assert.equal(run.outcome, "up");
      const [hit] = other.hits;
      assert.equal(hit.method, "POST", "307 keeps the method");
      assert.equal(hit.body, '{"a":1}');
      assert.equal(hit.headers.authorization, undefined);
      assert.equal(hit.headers.cookie, undefined);
      assert.equal(hit.headers["x-keep"], "1");
    });
  });
});

Deno.test("a 303 continues as GET without the body", async () => {
  await withTarget(async (t) => {
    await executeProbe(
      probe(`${t.origin}/redirect-to?url=%2Fecho&status=303`, { method: "POST", body: { a: 1 } }),
      options(),
    );
    assert.equal(t.hits[1].method, "GET");
    assert.equal(t.hits[1].body, "");
  });
});

Deno.test("a large body is read up to 1 MiB and the run still counts", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(probe(`${t.origin}/big`), options());
    assert.equal(run.outcome, "up");
  });
});

Deno.test("https by host name: SNI and certificate checked against the name, connected by address", async () => {
  await withTarget(async (t) => {
    const ca = await Deno.readTextFile(new URL("./testdata/ca.pem", import.meta.url));
    const resolve: Resolver = () => Promise.resolve(["127.0.0.1"]);
    const good = await executeProbe(
      probe(`https://probe.test:${t.port}/ok`),
      options({ resolve, ca }),
    );
    assert.equal(good.outcome, "up");
    assert.equal(good.address, "127.0.0.1");
    // The same server under a name its certificate does not carry fails verification.
    const wrong = await executeProbe(
      probe(`https://other.test:${t.port}/ok`),
      options({ resolve, ca }),
    );
    assert.equal(wrong.outcome, "down");
    assert.match(wrong.error!, /^TLS: /);
    // And without the test CA the certificate is not trusted.
    const untrusted = await executeProbe(
      probe(`https://probe.test:${t.port}/ok`),
      options({ resolve }),
    );
    assert.equal(untrusted.outcome, "down");
    assert.match(untrusted.error!, /^TLS: /);
  }, true);
});

Deno.test("a name that does not resolve is down with a DNS reason, after one retry", async () => {
  let calls = 0;
  const resolve: Resolver = () => {
    calls++;
    return Promise.reject(Object.assign(new Error("x"), { code: "ENOTFOUND" }));
  };
  const run = await executeProbe(probe("http://nowhere.test/"), options({ resolve }));
  assert.equal(run.outcome, "down");
  assert.equal(run.error, "DNS: ENOTFOUND");
  assert.equal(calls, 2);
});

// --- Assertions -----------------------------------------------------------------------------

const TESTDATA = new URL("./testdata/", import.meta.url);
const tlsFiles = async () => ({
  cert: await Deno.readTextFile(new URL("probe.test.pem", TESTDATA)),
  key: await Deno.readTextFile(new URL("probe.test.key", TESTDATA)),
});
const testCa = () => Deno.readTextFile(new URL("ca.pem", TESTDATA));
/** The test certificate's end of validity (`openssl x509 -enddate`). */
const CERT_VALID_TO = Date.parse("2126-10-28T19:50:13Z");
const DAY = 24 * 60 * 60 * 1000;

/** A real local server answering with `answer(path)`; its origin is given to `fn`. */
async function withServer(
  answer: (url: URL) => Response | Promise<Response>,
  fn: (origin: string, port: number) => Promise<void>,
  tls?: { cert: string; key: string },
) {
  const { promise, resolve } = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, ...tls, onListen: ({ port }) => resolve(port) },
    (request) => answer(new URL(request.url)),
  );
  const port = await promise;
  try {
    await fn(`${tls ? "https" : "http"}://127.0.0.1:${port}`, port);
  } finally {
    await server.shutdown();
  }
}

const HEALTH = JSON.stringify({
  status: "UP",
  checks: [{ name: "db", ok: true }, { name: "cache", ok: false }],
  "a/b": { "~x": 1 },
  uptime: 3600,
});

/** `/health` (JSON with headers), `/text`, `/huge` (a marker after 1 MiB), `/status/N`. */
function health(url: URL): Response {
  switch (url.pathname) {
    case "/health":
      return new Response(HEALTH, {
        headers: {
          "content-type": "application/json",
          "X-Version": "2.4.1",
          "Set-Cookie": "session=very-s3cret; HttpOnly",
          "X-Auth-Token": "t0ken-s3cret",
        },
      });
    case "/text":
      return new Response("all systems operational\nno error today");
    case "/huge":
      return new Response("x".repeat(MAX_BODY_BYTES) + "MARKER");
    default:
      if (url.pathname.startsWith("/status/")) {
        return new Response("s", { status: Number(url.pathname.slice(8)) });
      }
      return new Response(null, { status: 404 });
  }
}

const withExpect = (url: string, expect: unknown, fields: Partial<ProbeTarget> = {}) =>
  probe(url, { expect: probeExpect.parse(expect), ...fields });

Deno.test("a status list replaces the default rule: an expected 404 is up, an unexpected 200 down", async () => {
  await withServer(health, async (origin) => {
    const expected = await executeProbe(
      withExpect(`${origin}/status/404`, { status: [404, "5xx"] }),
      options(),
    );
    assert.equal(expected.outcome, "up");
    assert.equal(expected.httpStatus, 404);
    assert.equal(expected.error, null);
    assert.deepEqual(expected.failedChecks, []);

    const unexpected = await executeProbe(
      withExpect(`${origin}/status/200`, { status: ["3xx", 204] }),
      options(),
    );
    assert.equal(unexpected.outcome, "down");
    assert.equal(unexpected.httpStatus, 200);
    assert.equal(unexpected.error, "assertion failed: status");
    assert.deepEqual(unexpected.failedChecks, [
      { check: "status", expected: "one of 3xx, 204", seen: "200" },
    ]);
  });
});

Deno.test("an empty expect keeps the default rule, and says so in its checks", async () => {
  await withServer(health, async (origin) => {
    const failing = await executeProbe(withExpect(`${origin}/status/500`, {}), options());
    assert.equal(failing.outcome, "down");
    assert.equal(failing.error, "HTTP 500");
    assert.deepEqual(failing.failedChecks, [
      { check: "status", expected: "below 400", seen: "500" },
    ]);
    const passing = await executeProbe(withExpect(`${origin}/status/302`, {}), options());
    assert.equal(passing.outcome, "up");
    assert.deepEqual(passing.failedChecks, []);
  });
});

Deno.test("body assertions: contains and not_contains on the text read", async () => {
  await withServer(health, async (origin) => {
    const ok = await executeProbe(
      withExpect(`${origin}/text`, {
        body: { contains: ["operational"], not_contains: ["maintenance"] },
      }),
      options(),
    );
    assert.equal(ok.outcome, "up");
    assert.deepEqual(ok.failedChecks, []);
    const bad = await executeProbe(
      withExpect(`${origin}/text`, {
        body: { contains: ["all", "degraded"], not_contains: ["error"] },
      }),
      options(),
    );
    assert.equal(bad.outcome, "down");
    assert.equal(bad.error, "assertion failed: body.contains.1, body.not_contains.0");
    assert.deepEqual(bad.failedChecks, [
      {
        check: "body.contains.1",
        expected: 'body contains "degraded"',
        seen: "all systems operational no error today",
      },
      {
        check: "body.not_contains.0",
        expected: 'body does not contain "error"',
        seen: "all systems operational no error today",
      },
    ]);
  });
});

Deno.test("only the first 1 MiB of the body is searched, and the run still counts", async () => {
  await withServer(health, async (origin) => {
    const run = await executeProbe(
      withExpect(`${origin}/huge`, { body: { contains: ["MARKER"] } }),
      options(),
    );
    assert.equal(run.outcome, "down");
    assert.equal(run.httpStatus, 200);
    assert.equal(run.failedChecks![0].check, "body.contains.0");
    assert.ok(run.failedChecks![0].seen!.length <= 80);
    // Below the cap it is found.
    const within = await executeProbe(
      withExpect(`${origin}/huge`, { body: { contains: ["xxxx"], not_contains: ["MARKER"] } }),
      options(),
    );
    assert.equal(within.outcome, "up");
  });
});

Deno.test("the final body is kept only when asked, cut at the cap; the certificate read only when asked", async () => {
  await withServer(health, async (origin) => {
    const policy = loopbackAllowed;
    const kept = await outboundRequest(
      { url: `${origin}/huge`, method: "GET" },
      { policy, timeoutMs: 5_000, keepBody: true },
    );
    assert.equal(kept.kind, "response");
    if (kept.kind !== "response") return;
    assert.equal(kept.body!.byteLength, MAX_BODY_BYTES);
    assert.equal(kept.certificate, null, "no certificate over http");
    // Over https the certificate is read when asked, and only then.
    const tls = await tlsFiles();
    const ca = await testCa();
    const resolve: Resolver = () => Promise.resolve(["127.0.0.1"]);
    await withServer(health, async (_origin, port) => {
      const url = `https://probe.test:${port}/text`;
      const read = await outboundRequest(
        { url, method: "GET" },
        { policy, timeoutMs: 5_000, ca, resolve, readCertificate: true },
      );
      assert.deepEqual(
        read.kind === "response" && read.certificate,
        { validTo: new Date(CERT_VALID_TO) },
      );
      const unread = await outboundRequest(
        { url, method: "GET" },
        { policy, timeoutMs: 5_000, ca, resolve },
      );
      assert.equal(unread.kind === "response" && unread.certificate, null);
    }, tls);
    const small = await outboundRequest(
      { url: `${origin}/huge`, method: "GET" },
      { policy, timeoutMs: 5_000, keepBody: true, maxBodyBytes: 10 },
    );
    assert.equal(
      small.kind === "response" && new TextDecoder().decode(small.body!),
      "x".repeat(10),
    );
    const thrown = await outboundRequest(
      { url: `${origin}/text`, method: "GET" },
      { policy, timeoutMs: 5_000 },
    );
    assert.equal(thrown.kind === "response" && thrown.body, null);
    assert.equal(
      thrown.kind === "response" && thrown.headers["content-type"],
      "text/plain;charset=UTF-8",
    );
  });
});

Deno.test("JSON assertions on a real JSON body; a body that is not JSON fails them", async () => {
  await withServer(health, async (origin) => {
    const ok = await executeProbe(
      withExpect(`${origin}/health`, {
        json: [
          { path: "/status", op: "eq", value: "UP" },
          { path: "/checks/0/ok", op: "eq", value: true },
          { path: "/checks/1/name", op: "ne", value: "db" },
          { path: "/uptime", op: "ge", value: 60 },
          { path: "/a~1b/~0x", op: "lt", value: 2 },
          { path: "/status", op: "contains", value: "U" },
          { path: "/checks/2", op: "not_exists" },
          { path: "/checks", op: "exists" },
        ],
      }),
      options(),
    );
    assert.deepEqual(ok.failedChecks, []);
    assert.equal(ok.outcome, "up");

    const bad = await executeProbe(
      withExpect(`${origin}/health`, {
        json: [
          { path: "/status", op: "eq", value: "UP" },
          { path: "/checks/1/ok", op: "eq", value: true },
          { path: "/version", op: "exists" },
        ],
      }),
      options(),
    );
    assert.equal(bad.outcome, "down");
    assert.equal(bad.error, "assertion failed: json.1, json.2");
    assert.deepEqual(bad.failedChecks, [
      { check: "json.1", expected: "/checks/1/ok eq true", seen: "false" },
      { check: "json.2", expected: "/version exists", seen: "missing" },
    ]);

    const text = await executeProbe(
      withExpect(`${origin}/text`, { json: [{ path: "", op: "exists" }] }),
      options(),
    );
    assert.equal(text.outcome, "down");
    assert.deepEqual(text.failedChecks, [
      { check: "json.0", expected: "(root) exists", seen: "body is not JSON" },
    ]);
  });
});

Deno.test("header assertions match names ignoring case and never show credentials", async () => {
  await withServer(health, async (origin) => {
    const ok = await executeProbe(
      withExpect(`${origin}/health`, {
        headers: [
          { name: "x-version", op: "eq", value: "2.4.1" },
          { name: "CONTENT-TYPE", op: "contains", value: "json" },
          { name: "Set-Cookie", op: "exists" },
          { name: "X-Missing", op: "not_exists" },
        ],
      }),
      options(),
    );
    assert.deepEqual(ok.failedChecks, []);
    const bad = await executeProbe(
      withExpect(`${origin}/health`, {
        headers: [
          { name: "X-Version", op: "eq", value: "3" },
          { name: "set-cookie", op: "contains", value: "admin" },
          { name: "x-auth-token", op: "not_exists" },
        ],
      }),
      options(),
    );
    assert.equal(bad.outcome, "down");
    assert.deepEqual(bad.failedChecks, [
      { check: "headers.0", expected: 'x-version eq "3"', seen: "2.4.1" },
      { check: "headers.1", expected: "set-cookie contains <redacted>", seen: "<redacted>" },
      { check: "headers.2", expected: "x-auth-token not_exists", seen: "<redacted>" },
    ]);
    assert.ok(!JSON.stringify(bad).includes("s3cret"));
  });
});

Deno.test("headers of a redirect hop are not the final response's", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(
      withExpect(`${t.origin}/redirect/2`, { headers: [{ name: "location", op: "not_exists" }] }),
      options(),
    );
    assert.equal(run.outcome, "up");
    assert.deepEqual(run.failedChecks, []);
  });
});

Deno.test("latency makes a run degraded only when every assertion passed", async () => {
  await withTarget(async (t) => {
    const passing = await executeProbe(
      withExpect(`${t.origin}/slow?ms=150`, { body: { contains: ["slow"] } }, { latency: 20 }),
      options(),
    );
    assert.equal(passing.outcome, "degraded");
    assert.equal(passing.error, "slower than 20 ms");
    assert.deepEqual(passing.failedChecks, []);
    const failing = await executeProbe(
      withExpect(`${t.origin}/slow?ms=150`, { body: { contains: ["fast"] } }, { latency: 20 }),
      options(),
    );
    assert.equal(failing.outcome, "down");
    assert.equal(failing.error, "assertion failed: body.contains.0");
  });
});

Deno.test("no response, no checks: a timeout with assertions has failedChecks null", async () => {
  await withTarget(async (t) => {
    const run = await executeProbe(
      withExpect(`${t.origin}/hang`, { status: [200] }),
      options({ timeoutMs: 100 }),
    );
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "timeout after 100 ms");
    assert.equal(run.failedChecks, null);
  });
});

Deno.test("certificate_days reads the final https hop's real certificate", async () => {
  const tls = await tlsFiles();
  const ca = await testCa();
  const resolve: Resolver = () => Promise.resolve(["127.0.0.1"]);
  await withServer(health, async (_origin, port) => {
    const url = `https://probe.test:${port}/health`;
    const ok = await executeProbe(
      withExpect(url, { certificate_days: 3650 }),
      options({ resolve, ca }),
    );
    assert.equal(ok.outcome, "up");
    assert.deepEqual(ok.failedChecks, []);
    // Run as if 100 days before the certificate ends.
    const now = CERT_VALID_TO - 100 * DAY;
    const late = await executeProbe(
      withExpect(url, { certificate_days: 101 }),
      options({ resolve, ca, now: () => now }),
    );
    assert.equal(late.outcome, "down");
    assert.equal(late.error, "assertion failed: certificate_days");
    assert.deepEqual(late.failedChecks, [{
      check: "certificate_days",
      expected: "certificate valid for at least 101 more days",
      seen: "expires on 2126-10-28T19:50:13.000Z, in 100 days",
    }]);
    const enough = await executeProbe(
      withExpect(url, { certificate_days: 100 }),
      options({ resolve, ca, now: () => now }),
    );
    assert.equal(enough.outcome, "up");
  }, tls);
});

Deno.test("certificate_days applies to the final hop: https to http fails, http to https passes", async () => {
  const ca = await testCa();
  const resolve: Resolver = () => Promise.resolve(["127.0.0.1"]);
  await withTarget(async (plain) => {
    await withTarget(async (secure) => {
      const toPlain = encodeURIComponent(`${plain.origin}/ok`);
      const down = await executeProbe(
        withExpect(`https://probe.test:${secure.port}/redirect-to?url=${toPlain}`, {
          certificate_days: 1,
        }),
        options({ resolve, ca }),
      );
      assert.equal(down.outcome, "down");
      assert.deepEqual(down.failedChecks, [{
        check: "certificate_days",
        expected: "certificate valid for at least 1 more days",
        seen: "no certificate: the final hop was http",
      }]);
      const toSecure = encodeURIComponent(`https://probe.test:${secure.port}/ok`);
      const up = await executeProbe(
        withExpect(`${plain.origin}/redirect-to?url=${toSecure}`, { certificate_days: 1 }),
        options({ resolve, ca }),
      );
      assert.equal(up.outcome, "up");
      assert.deepEqual(up.failedChecks, []);
    }, true);
  });
});
