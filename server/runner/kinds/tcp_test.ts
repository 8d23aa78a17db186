/**
 * `tcp://` runs against listeners the tests start on loopback: accepted, refused, silent,
 * answering, flooding, resetting; the network policy on addresses and names.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { createNetworkPolicy, parseNetworks } from "../../base/outbound/network_policy.ts";
import { type ExecuteOptions, executeProbe, type ProbeTarget } from "../execute.ts";
import { closedPort } from "../../testing/target_server.ts";
import { sleep } from "../../base/sleep.ts";
import { MAX_ANSWER_BYTES } from "./conversation.ts";
import { createWorkerExecutor } from "../worker_executor.ts";

const loopbackAllowed = createNetworkPolicy(parseNetworks("127.0.0.0/8"));

function probe(url: string, fields: Partial<ProbeTarget> = {}): ProbeTarget {
  return { url, method: "GET", headers: {}, body: null, latency: null, expect: null, ...fields };
}

function options(over: Partial<ExecuteOptions> = {}): ExecuteOptions {
  return { policy: loopbackAllowed, timeoutMs: 5_000, sleep: () => Promise.resolve(), ...over };
}

/** What a listener saw: connections, and what its `serve` noted of what it was sent. */
interface Seen {
  connections: number;
  received: string[];
}

/** A loopback listener that hands each connection to `serve`; counts connections and bytes. */
function listener(serve: (conn: Deno.Conn, seen: Seen) => Promise<void> = async () => {}) {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: Seen = { connections: 0, received: [] };
  const open = new Set<Deno.Conn>();
  const served = (async () => {
    for await (const conn of l) {
      seen.connections++;
      open.add(conn);
      serve(conn, seen).catch(() => {}).finally(() => {
        open.delete(conn);
        try {
          conn.close();
        } catch { /* closed by serve */ }
      });
    }
  })().catch(() => {});
  return {
    url: `tcp://127.0.0.1:${(l.addr as Deno.NetAddr).port}`,
    port: (l.addr as Deno.NetAddr).port,
    seen,
    async close() {
      l.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* already closed */ }
      }
      await served;
    },
  };
}

/**
 * Waits (up to 2 s) until the listener has taken `n` connections: a probe that only connects is
 * done once the kernel accepted it, and the listener takes it from the backlog on a later turn;
 * closing the listener before would drop it unseen.
 */
async function seenConnections(seen: Seen, n: number) {
  for (let i = 0; i < 400 && seen.connections < n; i++) await sleep(5);
}

/** Reads what the peer sends until it has `until` (or closes); returns it as text. */
async function readUntil(conn: Deno.Conn, until: string): Promise<string> {
  const buffer = new Uint8Array(4096);
  let text = "";
  while (!text.includes(until)) {
    const n = await conn.read(buffer);
    if (n === null) break;
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
  return text;
}

const write = (conn: Deno.Conn, text: string) => conn.write(new TextEncoder().encode(text));

/** Waits until the peer closes, so a connection stays open as long as the probe keeps it. */
async function untilClosed(conn: Deno.Conn) {
  const buffer = new Uint8Array(4096);
  while (await conn.read(buffer).catch(() => null) !== null) { /* drain */ }
}

/** One run of a probe with `fields` against a listener that serves with `serve`. */
async function runAgainst(
  serve: (conn: Deno.Conn, seen: Seen) => Promise<void>,
  fields: Partial<ProbeTarget> = {},
  over: Partial<ExecuteOptions> = {},
) {
  const l = listener(serve);
  try {
    const started = performance.now();
    const run = await executeProbe(probe(l.url, fields), options(over));
    return { run, took: performance.now() - started, seen: l.seen };
  } finally {
    await l.close();
  }
}

Deno.test("an accepted connection is up, with its address and connect time", async () => {
  const l = listener(untilClosed);
  let run;
  try {
    run = await executeProbe(probe(l.url), options({ now: () => 1_000 }));
    await seenConnections(l.seen, 1);
  } finally {
    await l.close();
  }
  assert.equal(run.outcome, "up");
  assert.equal(run.error, null);
  assert.equal(run.address, "127.0.0.1");
  assert.equal(run.httpStatus, null);
  assert.equal(run.failedChecks, null, "no expect, no checks");
  assert.deepEqual(run.startedAt, new Date(1_000));
  assert.ok(run.durationMs >= 0 && run.durationMs < 1_000);
  assert.equal(l.seen.connections, 1);
});

Deno.test("a closed port is down, 'connection refused', after one retry", async () => {
  const pauses: number[] = [];
  let connects = 0;
  const run = await executeProbe(
    probe(`tcp://127.0.0.1:${closedPort()}`),
    options({
      sleep: (ms) => (pauses.push(ms), Promise.resolve()),
      retryPauseMs: 7,
      beforeRequest: () => connects++,
    }),
  );
  assert.equal(run.outcome, "down");
  assert.equal(run.error, "connection refused");
  assert.equal(run.address, "127.0.0.1");
  assert.equal(run.failedChecks, null);
  assert.deepEqual(pauses, [7], "one pause, then one retry");
  assert.equal(connects, 2);
});

Deno.test("a peer that resets the connection is down, 'connection reset', tried twice", async () => {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.on("error", () => {});
    socket.once("data", () => socket.resetAndDestroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  try {
    const run = await executeProbe(
      probe(`tcp://127.0.0.1:${port}`, { body: "HELLO\n", expect: { body: { contains: ["OK"] } } }),
      options(),
    );
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "connection reset");
    assert.equal(connections, 2);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

Deno.test("a listener that accepts and never answers an expect is down at the timeout", async () => {
  const { run, took, seen } = await runAgainst(untilClosed, {
    expect: { body: { contains: ["220"] } },
    timeoutMs: 300,
  });
  assert.equal(run.outcome, "down");
  assert.equal(run.error, "timed out after 300 ms waiting for an answer");
  assert.equal(run.failedChecks, null, "no answer, no checks");
  assert.ok(took >= 290 && took < 2_000, `${took} ms`);
  assert.equal(seen.connections, 1, "a timeout is not retried");
});

Deno.test("the body is sent as UTF-8 and the answer judged: passing", async () => {
  const { run, seen } = await runAgainst(async (conn, seen) => {
    const asked = await readUntil(conn, "\n");
    seen.received.push(asked);
    await write(conn, asked === "PING é\n" ? "+PONG\r\n" : "-ERR\r\n");
    await untilClosed(conn);
  }, { body: "PING é\n", expect: { body: { contains: ["PONG"] } } });
  assert.equal(run.outcome, "up", run.error ?? "");
  assert.deepEqual(run.failedChecks, []);
  assert.deepEqual(seen.received, ["PING é\n"]);
});

Deno.test("an answer without the text expected is down, saying what it lacked", async () => {
  const { run, seen } = await runAgainst(async (conn) => {
    await readUntil(conn, "\n");
    await write(conn, "-ERR unknown command\r\n");
  }, { body: "PING\n", expect: { body: { contains: ["PONG"] } } });
  assert.equal(run.outcome, "down");
  assert.equal(run.error, 'connected, but the answer did not contain "PONG"');
  assert.deepEqual(run.failedChecks, [{
    check: "body.contains.0",
    expected: 'body contains "PONG"',
    seen: "-ERR unknown command  ",
  }]);
  assert.equal(seen.connections, 1, "a failed check is not retried");
});

Deno.test("a banner with a forbidden text is down as soon as it is seen", async () => {
  const { run, took } = await runAgainst(async (conn) => {
    await write(conn, "421 Service not available\r\n");
    await untilClosed(conn);
  }, { expect: { body: { not_contains: ["421"] } } });
  assert.equal(run.outcome, "down");
  assert.equal(run.error, 'connected, but the answer contained "421"');
  assert.ok(took < 2_000, "not read until the timeout");
});

Deno.test("a body without expect is sent, and the connection closed at once", async () => {
  const l = listener(async (conn, seen) => {
    seen.received.push(await readUntil(conn, "\n"));
    await untilClosed(conn);
  });
  try {
    const run = await executeProbe(probe(l.url, { body: "hello\n" }), options());
    assert.equal(run.outcome, "up");
    for (let i = 0; i < 100 && l.seen.received.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(l.seen.received, ["hello\n"]);
  } finally {
    await l.close();
  }
});

Deno.test("a connect slower than the probe's latency is degraded", async () => {
  // A monotonic clock that moves 40 ms each time it is read: the connect takes 40 ms.
  let t = 0;
  const { run } = await runAgainst(untilClosed, { latency: 20 }, { elapsed: () => (t += 40) });
  assert.equal(run.outcome, "degraded");
  assert.equal(run.error, "slower than 20 ms");
  assert.equal(run.durationMs, 40);
  const fast = await runAgainst(untilClosed, { latency: 1_000 });
  assert.equal(fast.run.outcome, "up");
});

Deno.test("a flood of answer is read to 64 KiB, not to the timeout", async () => {
  const { run, took } = await runAgainst(async (conn) => {
    const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
    for (let i = 0; i < 10_000; i++) await conn.write(chunk);
  }, { expect: { body: { contains: ["never"] } } });
  assert.equal(run.outcome, "down");
  assert.equal(run.error, 'connected, but the answer did not contain "never"');
  assert.ok(run.failedChecks![0].seen!.length <= 80);
  assert.ok(took < 2_000);
  assert.equal(MAX_ANSWER_BYTES, 64 * 1024);
});

Deno.test("a connection that is never accepted times out 'connecting'", async () => {
  // A listener that never accepts: once its backlog is full, connections hang in SYN.
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  const filling: net.Socket[] = [];
  try {
    for (let i = 0; i < 5_000; i++) {
      const s = net.connect({ host: "127.0.0.1", port });
      filling.push(s);
      const connected = new Promise<boolean>((resolve) => {
        s.once("connect", () => resolve(true));
        s.once("error", () => resolve(false));
      });
      const within = async (ms: number) => {
        const waited = new AbortController();
        try {
          return await Promise.race([connected, sleep(ms, waited.signal).then(() => false)]);
        } finally {
          waited.abort(); // no timer left behind
        }
      };
      // Not connected within 100 ms: the backlog is full, or the machine is busy (a loaded CI
      // took longer than that to accept); a second, longer wait tells them apart.
      if (!await within(100) && !await within(1_000)) break;
    }
    const run = await executeProbe(probe(`tcp://127.0.0.1:${port}`, { timeoutMs: 300 }), options());
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "timed out after 300 ms connecting");
    assert.equal(run.address, "127.0.0.1");
  } finally {
    for (const s of filling) s.destroy();
    l.close();
  }
});

Deno.test("loopback refused by the policy is blocked, and nothing connects", async () => {
  const { run, seen } = await runAgainst(untilClosed, {}, { policy: createNetworkPolicy() });
  assert.equal(run.outcome, "blocked");
  assert.equal(run.error, "blocked: 127.0.0.1 is loopback (not in PROBE_ALLOW_NETWORKS)");
  assert.equal(run.address, "127.0.0.1");
  assert.equal(seen.connections, 0);
});

Deno.test("a name is connected to at the address checked, and blocked by what it resolves to", async () => {
  const l = listener(untilClosed);
  try {
    const names: string[] = [];
    const pinned = await executeProbe(
      probe(`tcp://db.internal.test:${l.port}`),
      options({ resolve: (name) => (names.push(name), Promise.resolve(["127.0.0.1"])) }),
    );
    assert.equal(pinned.outcome, "up");
    assert.equal(pinned.address, "127.0.0.1");
    assert.deepEqual(names, ["db.internal.test"], "resolved once");

    const blocked = await executeProbe(
      probe(`tcp://db.internal.test:${l.port}`),
      options({ policy: createNetworkPolicy(), resolve: () => Promise.resolve(["127.0.0.1"]) }),
    );
    assert.equal(blocked.outcome, "blocked");
    assert.equal(blocked.error, "blocked: 127.0.0.1 is loopback (not in PROBE_ALLOW_NETWORKS)");
    const metadata = await executeProbe(
      probe("tcp://metadata.test:80"),
      options({ resolve: () => Promise.resolve(["169.254.169.254"]) }),
    );
    assert.equal(metadata.outcome, "blocked");
    assert.equal(metadata.address, "169.254.169.254");
    await seenConnections(l.seen, 1);
    assert.equal(l.seen.connections, 1, "only the allowed run connected");
  } finally {
    await l.close();
  }
});

Deno.test("a name that does not resolve is down in words, retried once; a slow one times out", async () => {
  let asked = 0;
  const missing = await executeProbe(
    probe("tcp://nowhere.test:25"),
    options({
      resolve:
        () => (asked++, Promise.reject(Object.assign(new Error("x"), { code: "ENOTFOUND" }))),
    }),
  );
  assert.equal(missing.outcome, "down");
  assert.equal(missing.error, "DNS: ENOTFOUND");
  assert.equal(asked, 2);

  const slow = await executeProbe(
    probe("tcp://slow.test:25", { timeoutMs: 100 }),
    options({ resolve: () => new Promise(() => {}) }),
  );
  assert.equal(slow.outcome, "down");
  assert.equal(slow.error, "timed out after 100 ms resolving the host name");
});

Deno.test("in the runner's worker thread, as the runners run probes, a tcp probe runs alike", async () => {
  const worker = createWorkerExecutor({ allowNetworks: ["127.0.0.0/8"], timeoutMs: 5_000 });
  const l = listener(async (conn) => {
    await readUntil(conn, "\n");
    await write(conn, "+PONG\r\n");
    await untilClosed(conn);
  });
  try {
    const up = await worker.execute(
      probe(l.url, { body: "PING\n", expect: { body: { contains: ["+PONG"] } } }),
    );
    assert.equal(up.outcome, "up", up.error ?? "");
    assert.deepEqual(up.failedChecks, []);
    const refused = await worker.execute(probe(`tcp://127.0.0.1:${closedPort()}`));
    assert.equal(refused.outcome, "down");
    assert.equal(refused.error, "connection refused");
  } finally {
    worker.close();
    await l.close();
  }
});
