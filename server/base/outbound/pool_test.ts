import assert from "node:assert/strict";
import http from "node:http";
import { createNetworkPolicy, type Resolver } from "./network_policy.ts";
import { createConnectionPool, outboundRequest } from "./request.ts";

/** A receiver on every loopback address that counts its connections by the address reached. */
async function receiver(keepAliveTimeout = 5_000) {
  const reached: string[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.statusCode = 204;
      res.end();
    });
  });
  server.on("connection", (socket) => reached.push(socket.localAddress ?? ""));
  server.keepAliveTimeout = keepAliveTimeout;
  await new Promise<void>((r) => server.listen(0, "0.0.0.0", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    reached,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const policy = createNetworkPolicy(["127.0.0.0/8"]);

Deno.test("pool: a burst to one receiver goes over kept connections, not one each", async () => {
  const r = await receiver();
  const pool = createConnectionPool();
  try {
    const url = `http://127.0.0.1:${r.port}/hook`;
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(
        Array.from(
          { length: 4 },
          () =>
            outboundRequest({ url, method: "POST", body: "{}" }, {
              policy,
              timeoutMs: 5_000,
              pool,
            }),
        ),
      );
      assert.deepEqual(results.map((x) => x.kind === "response" && x.status), [204, 204, 204, 204]);
    }
    assert.ok(r.reached.length <= 4, `${r.reached.length} connections for 20 requests`);
  } finally {
    pool.close();
    await r.close();
  }
});

Deno.test("pool: a name that resolves to another address later never reuses the old connections", async () => {
  const r = await receiver();
  const pool = createConnectionPool();
  let address = "127.0.0.1";
  const resolve: Resolver = () => Promise.resolve([address]);
  try {
    const send = () =>
      outboundRequest(
        { url: `http://receiver.test:${r.port}/hook`, method: "POST", body: "{}" },
        { policy, resolve, timeoutMs: 5_000, pool },
      );
    assert.equal((await send()).address, "127.0.0.1");
    address = "127.0.0.2";
    const second = await send();
    assert.equal(second.kind === "response" && second.status, 204);
    assert.equal(second.address, "127.0.0.2");
    // The second request connected anew, to the address checked for it.
    assert.deepEqual(r.reached, ["127.0.0.1", "127.0.0.2"]);
    // And the blocked address stays blocked with a kept connection open to the name.
    address = "10.0.0.1";
    assert.equal((await send()).kind, "blocked");
  } finally {
    pool.close();
    await r.close();
  }
});

Deno.test("pool: a kept connection the receiver closed while idle is replaced, the request answered", async () => {
  const r = await receiver(200);
  const pool = createConnectionPool();
  try {
    const send = () =>
      outboundRequest(
        { url: `http://127.0.0.1:${r.port}/hook`, method: "POST", body: "{}" },
        { policy, timeoutMs: 5_000, pool },
      );
    assert.equal((await send()).kind, "response");
    await new Promise((done) => setTimeout(done, 500));
    const again = await send();
    assert.equal(again.kind === "response" && again.status, 204);
    assert.equal(r.reached.length, 2);
  } finally {
    pool.close();
    await r.close();
  }
});
