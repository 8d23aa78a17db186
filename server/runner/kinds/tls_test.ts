/**
 * `tls://` probes against TLS servers the tests start on loopback with the test certificates of
 * ./testdata (a local CA; leaves valid, expired, not yet valid, for another name, self-signed),
 * then through the interface: a tls probe created and run now, on both databases.
 */
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import { createApp } from "../../app.ts";
import { createLogger } from "../../base/log.ts";
import { createNetworkPolicy, type Resolver } from "../../base/outbound/network_policy.ts";
import {
  backends,
  freshDatabase,
  LOOPBACK_ONLY,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../../testing/app.ts";
import { closedPort } from "../../testing/target_server.ts";
import { type ExecuteOptions, executeProbe, type ProbeTarget } from "../execute.ts";
import { MAX_ANSWER_BYTES } from "./conversation.ts";

const TESTDATA = new URL("./testdata/", import.meta.url);
const read = (name: string) => Deno.readTextFileSync(new URL(name, TESTDATA));
const ca = read("ca.pem");
const key = read("leaf.key");
const DAY_MS = 24 * 60 * 60 * 1000;

/** Every name resolves to loopback, where the test servers listen. */
const resolve: Resolver = () => Promise.resolve(["127.0.0.1"]);

function probe(url: string, fields: Partial<ProbeTarget> = {}): ProbeTarget {
  return { url, method: "GET", headers: {}, body: null, latency: null, expect: null, ...fields };
}

function options(over: Partial<ExecuteOptions> = {}): ExecuteOptions {
  return {
    policy: LOOPBACK_ONLY,
    timeoutMs: 5_000,
    resolve,
    ca,
    sleep: () => Promise.resolve(),
    ...over,
  };
}

type Serve = (socket: net.Socket) => void;

/** A loopback server (TLS with `certificate`, else plain TCP) for the length of `fn`. */
async function withServer(
  certificate: string | null,
  serve: Serve,
  fn: (port: number) => Promise<void>,
): Promise<void> {
  const sockets = new Set<net.Socket>();
  const handle = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    serve(socket);
  };
  const server = certificate === null
    ? net.createServer(handle)
    : tls.createServer({ key, cert: read(certificate) }, handle);
  server.on("tlsClientError", () => {});
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    await fn((server.address() as net.AddressInfo).port);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** A TLS server that says hello and closes. */
const hello: Serve = (socket) => socket.end("hello\n");

/** Answers each line it is sent with `PONG <line>`. */
const pong: Serve = (socket) =>
  socket.on("data", (chunk: Uint8Array) => {
    socket.end(`PONG ${new TextDecoder().decode(chunk).trim()}\n`);
  });

Deno.test("tls: a valid certificate for the name, from a trusted CA, is up; latency is the handshake", async () => {
  await withServer("probe.test.pem", hello, async (port) => {
    const run = await executeProbe(
      probe(`tls://probe.test:${port}`),
      options({ now: () => 1_000 }),
    );
    assert.equal(run.error, null);
    assert.equal(run.outcome, "up");
    assert.equal(run.address, "127.0.0.1");
    assert.equal(run.httpStatus, null);
    assert.equal(run.failedChecks, null);
    assert.deepEqual(run.startedAt, new Date(1_000));
    assert.ok(run.durationMs >= 0 && run.durationMs < 5_000);
  });
});

Deno.test("tls: an expired certificate is down, said with its days", async () => {
  await withServer("expired.pem", hello, async (port) => {
    // It expired on 2021-01-01; three and a half days later by the run's clock.
    const now = Date.parse("2021-01-04T12:00:00Z");
    const run = await executeProbe(probe(`tls://probe.test:${port}`), options({ now: () => now }));
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "certificate expired 3 days ago (2021-01-01)");
    assert.equal(run.failedChecks, null);
    // By the real clock, years ago.
    const today = await executeProbe(probe(`tls://probe.test:${port}`), options());
    assert.match(today.error!, /^certificate expired \d{4} days ago \(2021-01-01\)$/);
  });
});

Deno.test("tls: a certificate not valid yet is down, said with its first day", async () => {
  await withServer("not_yet_valid.pem", hello, async (port) => {
    const run = await executeProbe(probe(`tls://probe.test:${port}`), options());
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "certificate not valid until 2126-01-01");
  });
});

Deno.test("tls: a certificate for another name is a name mismatch, naming what it is for", async () => {
  await withServer("other.test.pem", hello, async (port) => {
    const run = await executeProbe(probe(`tls://probe.test:${port}`), options());
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "name mismatch: the certificate is for other.test");
    assert.equal(run.address, "127.0.0.1");
  });
  // By address, a certificate for a name does not match either.
  await withServer("probe.test.pem", hello, async (port) => {
    const run = await executeProbe(probe(`tls://127.0.0.1:${port}`), options());
    assert.equal(run.error, "name mismatch: the certificate is for probe.test");
  });
});

Deno.test("tls: an untrusted chain is down: self-signed, or an issuer not trusted", async () => {
  await withServer("self_signed.pem", hello, async (port) => {
    const run = await executeProbe(probe(`tls://probe.test:${port}`), options());
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "untrusted certificate chain (self-signed)");
  });
  await withServer("probe.test.pem", hello, async (port) => {
    // Without the test CA, the system's authorities do not know its issuer.
    const run = await executeProbe(probe(`tls://probe.test:${port}`), options({ ca: undefined }));
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "untrusted certificate chain (issuer unknown)");
  });
});

Deno.test("tls: a CA trusted besides the system's (PROBE_CA_FILE's form) says what the CA alone says", async () => {
  // The service's `ca` with PROBE_CA_FILE: the system's authorities, then the file's.
  const withSystem = options({ ca: [...tls.rootCertificates, ca].join("\n") });
  let handshakes = 0;
  const counted: Serve = (socket) => {
    handshakes++;
    hello(socket);
  };
  const handshaken = async (n: number) => {
    while (handshakes < n) await new Promise((r) => setTimeout(r, 5));
  };
  await withServer("probe.test.pem", counted, async (port) => {
    const first = await executeProbe(probe(`tls://probe.test:${port}`), withSystem);
    assert.equal(first.error, null);
    assert.equal(first.outcome, "up");
    // The system's store refused it once; the next run goes to the CA that passed it. (The
    // server sees the last handshake end after the client does.)
    await handshaken(2);
    assert.equal(handshakes, 2);
    const next = await executeProbe(
      probe(`tls://probe.test:${port}`, {
        expect: { certificate_days: 1 },
      }),
      withSystem,
    );
    assert.equal(next.outcome, "up");
    await handshaken(3);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(handshakes, 3);
  });
  const now = Date.parse("2021-01-04T12:00:00Z");
  const cases: [string, string, ExecuteOptions][] = [
    ["expired.pem", "certificate expired 3 days ago (2021-01-01)", {
      ...withSystem,
      now: () => now,
    }],
    ["other.test.pem", "name mismatch: the certificate is for other.test", withSystem],
    ["self_signed.pem", "untrusted certificate chain (self-signed)", withSystem],
  ];
  for (const [certificate, error, over] of cases) {
    await withServer(certificate, hello, async (port) => {
      const run = await executeProbe(probe(`tls://probe.test:${port}`), over);
      assert.equal(run.outcome, "down", certificate);
      assert.equal(run.error, error);
    });
  }
});

Deno.test("tls: nothing is sent to a peer whose certificate is refused", async () => {
  let heard = "";
  const listen: Serve = (socket) => socket.on("data", (c: Uint8Array) => heard += c.toString());
  await withServer("self_signed.pem", listen, async (port) => {
    const run = await executeProbe(
      probe(`tls://probe.test:${port}`, { body: "secret\n" }),
      options(),
    );
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "untrusted certificate chain (self-signed)");
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(heard, "");
  });
});

Deno.test("tls: certificate_days fails on a certificate expiring too soon, passes on one that lasts", async () => {
  await withServer("probe.test.pem", hello, async (port) => {
    // The certificate ends on 2126-01-01: 20 days after this run's clock.
    const now = Date.parse("2126-01-01T00:00:00Z") - 20 * DAY_MS;
    const expect = { certificate_days: 30 };
    const short = await executeProbe(
      probe(`tls://probe.test:${port}`, { expect }),
      options({ now: () => now }),
    );
    assert.equal(short.outcome, "down");
    assert.equal(
      short.error,
      "certificate expires in 20 days (2126-01-01), expected at least 30 more",
    );
    assert.deepEqual(short.failedChecks, [{
      check: "certificate_days",
      expected: "certificate valid for at least 30 more days",
      seen: "expires on 2126-01-01T00:00:00.000Z, in 20 days",
    }]);
    const lasting = await executeProbe(
      probe(`tls://probe.test:${port}`, { expect: { certificate_days: 3650 } }),
      options(),
    );
    assert.equal(lasting.outcome, "up");
    assert.deepEqual(lasting.failedChecks, []);
  });
});

Deno.test("tls: a body is sent over TLS and expect.body judges the answer", async () => {
  await withServer("probe.test.pem", pong, async (port) => {
    const url = `tls://probe.test:${port}`;
    const pass = await executeProbe(
      probe(url, { body: "PING\n", expect: { body: { contains: ["PONG PING"] } } }),
      options(),
    );
    assert.equal(pass.outcome, "up");
    assert.deepEqual(pass.failedChecks, []);
    const fail = await executeProbe(
      probe(url, { body: "PING\n", expect: { body: { contains: ["+OK"] }, certificate_days: 7 } }),
      options(),
    );
    assert.equal(fail.outcome, "down");
    assert.equal(fail.error, 'connected, but the answer did not contain "+OK"');
    assert.equal(fail.failedChecks?.[0].seen, "PONG PING ");
  });
});

Deno.test("tls: a peer flooding its answer is read up to 64 KiB, then judged", async () => {
  const flood: Serve = (socket) => {
    const chunk = "x".repeat(16 * 1024);
    const pump = () => {
      while (!socket.destroyed && socket.write(chunk));
      if (!socket.destroyed) socket.once("drain", pump);
    };
    pump();
  };
  await withServer("probe.test.pem", flood, async (port) => {
    const started = performance.now();
    const run = await executeProbe(
      probe(`tls://probe.test:${port}`, { expect: { body: { contains: ["never"] } } }),
      options(),
    );
    assert.equal(run.outcome, "down");
    assert.equal(run.error, 'connected, but the answer did not contain "never"');
    assert.ok(performance.now() - started < 4_000, "not left to the timeout");
    assert.ok(MAX_ANSWER_BYTES === 64 * 1024);
  });
});

Deno.test("tls: a closed port is refused, after one retry", async () => {
  let tries = 0;
  const run = await executeProbe(
    probe(`tls://probe.test:${closedPort()}`),
    options({ beforeRequest: () => tries++ }),
  );
  assert.equal(run.outcome, "down");
  assert.equal(run.error, "connection refused");
  assert.equal(run.address, "127.0.0.1");
  assert.equal(tries, 2);
});

Deno.test("tls: a listener that accepts but never shakes hands times out, its socket closed", async () => {
  let closed = false;
  // It reads (so it sees the end) and says nothing.
  const silent: Serve = (socket) => socket.resume().on("close", () => closed = true);
  await withServer(null, silent, async (port) => {
    const started = performance.now();
    const run = await executeProbe(
      probe(`tls://probe.test:${port}`, { timeoutMs: 300 }),
      options(),
    );
    const took = performance.now() - started;
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "timed out after 300 ms in the TLS handshake");
    assert.ok(took >= 290 && took < 2_000, `took ${took} ms`);
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(closed, "the connection is not left open");
  });
});

Deno.test("tls: a peer that does not speak TLS, or hangs up, fails the handshake", async () => {
  await withServer(null, (s) => s.end("HTTP/1.1 400 Bad Request\r\n\r\n"), async (port) => {
    const run = await executeProbe(probe(`tls://probe.test:${port}`), options());
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "TLS handshake failed: the answer was not TLS");
  });
  await withServer(null, (s) => s.destroy(), async (port) => {
    const run = await executeProbe(probe(`tls://probe.test:${port}`), options());
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "TLS handshake failed: the connection was closed");
  });
});

Deno.test("tls: the network policy refuses a blocked address, by address or by name", async () => {
  let connected = false;
  await withServer("probe.test.pem", () => connected = true, async (port) => {
    const policy = createNetworkPolicy();
    const byAddress = await executeProbe(probe(`tls://127.0.0.1:${port}`), options({ policy }));
    assert.equal(byAddress.outcome, "blocked");
    assert.equal(byAddress.address, "127.0.0.1");
    assert.match(
      byAddress.error!,
      /^blocked: 127\.0\.0\.1 is loopback \(not in PROBE_ALLOW_NETWORKS\)$/,
    );
    const byName = await executeProbe(probe(`tls://probe.test:${port}`), options({ policy }));
    assert.equal(byName.outcome, "blocked");
    assert.equal(byName.error, byAddress.error);
    assert.equal(connected, false);
  });
});

for (const backend of backends()) {
  Deno.test(`tls: a tls:// probe through the interface, run now [${backend}]`, async () => {
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      runProbe: (target, hooks) =>
        executeProbe(target, { ...hooks, policy: LOOPBACK_ONLY, timeoutMs: 5_000, resolve, ca }),
    });
    const api = new TestClient(app.handler);
    try {
      const run = async (certificate: string, expect?: unknown) => {
        // A project a run: each run's server listens on a port of the system's choosing, which
        // may be the one an earlier run's server just gave back, and a project holds one probe
        // per URL.
        const project = uniqueName();
        await api.post("/api/v1/projects", { project });
        let answer: { status: number; body: { data: Record<string, unknown> }; text: string };
        await withServer(certificate, hello, async (port) => {
          const created = await api.post(`/api/v1/projects/${project}/probes`, {
            url: `TLS://Probe.Test:${port}/`,
            ...(expect !== undefined && { expect }),
          });
          assert.equal(created.status, 201, created.text);
          assert.equal(created.body.data.url, `tls://probe.test:${port}`);
          const path = `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`;
          answer = await api.post(`${path}/run`);
          const results = await api.get(`${path}/results`);
          assert.equal(results.body.data[0].error, answer.body.data.error);
        });
        assert.equal(answer!.status, 200, answer!.text);
        return answer!.body.data;
      };
      const up = await run("probe.test.pem", { certificate_days: 30 });
      assert.equal(up.outcome, "up");
      assert.equal(up.error, null);
      assert.equal(up.http_status, null);
      const expired = await run("expired.pem");
      assert.equal(expired.outcome, "down");
      assert.match(String(expired.error), /^certificate expired \d+ days ago \(2021-01-01\)$/);
      const other = await run("other.test.pem");
      assert.equal(other.error, "name mismatch: the certificate is for other.test");
    } finally {
      await app.close();
    }
  });
}
