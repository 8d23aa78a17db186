import assert from "node:assert/strict";
import { type ExecuteOptions, executeProbe, type ProbeTarget } from "./execute.ts";
import { createNetworkPolicy, parseNetworks, type Resolver } from "../outbound/network_policy.ts";
import { closedPort, startTarget, type Target } from "../testing/target_server.ts";

const loopbackAllowed = createNetworkPolicy(parseNetworks("127.0.0.0/8"));
const noSleep = () => Promise.resolve();

function probe(url: string, fields: Partial<ProbeTarget> = {}): ProbeTarget {
  return { url, method: "GET", headers: {}, body: null, latency: null, ...fields };
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
    assert.equal(run.error, "blocked: 169.254.169.254 is link-local");
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
