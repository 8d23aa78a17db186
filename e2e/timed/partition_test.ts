/**
 * Issue 10: a network partition between the service and PostgreSQL. The test's own PostgreSQL
 * cluster sits behind a TCP proxy in this process that can be switched to swallow every byte,
 * both ways, without closing anything: the connections stay open and nothing answers, as when
 * a firewall or a broken route drops a connection's packets. (A stopped server, which resets its
 * connections, is `outage_test.ts`.) Connections that lost bytes stay dead after the partition
 * ends, as connections whose state a middlebox forgot; new ones work again.
 *
 * Contract: while partitioned, every request answers 503 `service_unavailable` within the
 * query deadline (DATABASE_QUERY_DEADLINE_MS, 2 s by default; the bound below allows 250 ms of
 * scheduling on top), `/readyz` too, and the connections that stopped answering are ended by
 * the service, not left to TCP; once the partition ends, requests succeed again within 5 s.
 */
import assert from "node:assert/strict";
import { type App, createApp } from "../../server/app.ts";
import { createLogger } from "../../server/base/log.ts";
import { findPgBin, startOwnCluster, timed } from "../../server/testing/cluster.ts";
import { TEST_API_KEY, TestClient } from "../../server/testing/app.ts";

const DEADLINE_MS = 2000;
const FAIL_FAST_MS = DEADLINE_MS + 250;
const HEAL_MS = 5000;

/** A TCP proxy on loopback whose every connection can be made to swallow bytes both ways. */
class BlackholeProxy {
  readonly port: number;
  /** While true, bytes are dropped and the connections that lose some stay dead. */
  blackhole = false;
  /** Connections the client side (the service) closed while they were dead. */
  deadClosedByClient = 0;
  readonly #listener: Deno.Listener;
  readonly #open = new Set<Deno.Conn>();
  readonly #accepting: Promise<void>;

  constructor(targetPort: number) {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.#listener = listener;
    this.port = (listener.addr as Deno.NetAddr).port;
    this.#accepting = (async () => {
      try {
        for await (const client of listener) this.#serve(client, targetPort);
      } catch { /* closed */ }
    })();
  }

  async #serve(client: Deno.Conn, targetPort: number): Promise<void> {
    this.#open.add(client);
    let server: Deno.Conn;
    try {
      server = await Deno.connect({ hostname: "127.0.0.1", port: targetPort });
    } catch {
      this.#close(client);
      return;
    }
    this.#open.add(server);
    const link = { dead: this.blackhole };
    const pump = async (from: Deno.Conn, to: Deno.Conn, fromClient: boolean) => {
      const buffer = new Uint8Array(64 * 1024);
      try {
        for (;;) {
          const n = await from.read(buffer);
          if (n === null) break;
          if (this.blackhole) link.dead = true;
          if (link.dead) continue;
          for (let sent = 0; sent < n;) sent += await to.write(buffer.subarray(sent, n));
        }
      } catch { /* reset or closed */ }
      if (fromClient) {
        if (link.dead) this.deadClosedByClient++;
        this.#close(server); // the service hung up: the server side is ours to clean up
      } else if (!link.dead) {
        this.#close(client); // a dead link tells the service nothing, not even a close
      }
    };
    await Promise.all([pump(client, server, true), pump(server, client, false)]);
  }

  #close(conn: Deno.Conn): void {
    if (!this.#open.delete(conn)) return;
    try {
      conn.close();
    } catch { /* closed already */ }
  }

  async close(): Promise<void> {
    this.#listener.close();
    await this.#accepting;
    for (const conn of [...this.#open]) this.#close(conn);
  }
}

Deno.test({
  name: "a partitioned PostgreSQL answers 503 within the query deadline and heals within 5 s",
  ignore: findPgBin() === null,
  fn: async (t) => {
    const cluster = await startOwnCluster();
    const proxy = new BlackholeProxy(cluster.port);
    const lines: string[] = [];
    let app: App | undefined;
    try {
      app = await createApp({
        database: {
          kind: "postgres",
          url: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
          connectTimeoutMs: 1500,
          statementTimeoutMs: 1500,
          queryDeadlineMs: DEADLINE_MS,
        },
        apiKeys: [TEST_API_KEY],
        log: createLogger("info", (line) => lines.push(line)),
      });
      const api = new TestClient(app.handler);
      assert.equal((await api.post("/api/v1/projects", { project: "kept" })).status, 201);
      const input = encodeURIComponent(JSON.stringify({ project: "kept" }));
      const reads = (n: number) =>
        Array.from({ length: n }, (_, i) =>
          [
            () => api.get("/api/v1/projects/kept"),
            () => api.get("/api/v1/probes?project=kept"),
            () => api.get(`/trpc/projects.get?input=${input}`),
          ][i % 3]());
      const writes = () => [
        api.post("/api/v1/projects/kept/probes", { url: "https://a.example.com/" }),
        api.patch("/api/v1/settings/iam-alive", { enabled: true }),
      ];
      // Connections open and in use, as in a running service: the partition catches them.
      for (let i = 0; i < 3; i++) {
        for (const res of await Promise.all(reads(21))) assert.equal(res.status, 200);
      }

      await t.step("partitioned: every request answers 503 within the deadline", async () => {
        proxy.blackhole = true;
        lines.length = 0;
        const waves = [];
        for (let wave = 0; wave < 3; wave++) {
          const { value, ms } = await timed(() =>
            Promise.all([
              ...[...reads(21), ...writes(), api.delete("/api/v1/projects/kept")].map((p) =>
                timed(() => p)
              ),
              timed(() => api.get("/readyz", { key: null })),
            ])
          );
          waves.push(Math.round(ms));
          for (const { value: res, ms: each } of value) {
            assert.ok(each < FAIL_FAST_MS, `wave ${wave}: answered in ${Math.round(each)} ms`);
            assert.equal(res.status, 503, res.text);
            if (res.body.status) {
              assert.deepEqual(res.body, { status: "unavailable" }); // /readyz
              continue;
            }
            const error = res.body.error.data?.error ?? res.body.error;
            assert.equal(error.code, "service_unavailable");
          }
        }
        console.log(`partition: waves of 26 requests answered 503 in ${waves.join(", ")} ms`);
        // The connections that stopped answering were ended by the service itself.
        assert.ok(proxy.deadClosedByClient > 0, "the dead connections were closed");
        assert.equal((await api.get("/healthz", { key: null })).status, 200);
        const logged = lines.map((l) => JSON.parse(l));
        assert.ok(logged.some((l) => l.msg === "database unavailable" && l.level === "warn"));
        assert.ok(!logged.some((l) => l.level === "error"), "a partition is no internal error");
        assert.ok(!lines.join("\n").includes("stack"));
      });

      await t.step("once the partition ends, requests succeed within 5 s", async () => {
        proxy.blackhole = false;
        const started = performance.now();
        let status = 0;
        while (performance.now() - started < HEAL_MS) {
          status = (await api.get("/api/v1/projects/kept")).status;
          if (status === 200) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const healedMs = Math.round(performance.now() - started);
        console.log(`partition: healed ${healedMs} ms after it ended`);
        assert.equal(status, 200, "healed within 5 s");
        assert.equal((await api.get("/readyz", { key: null })).status, 200);
        // Nothing is left on a dead connection: a burst wider than the pool all succeeds.
        const { value: burst, ms } = await timed(() => Promise.all([...reads(30), ...writes()]));
        for (const res of burst) assert.ok(res.status < 300, `${res.status} ${res.text}`);
        assert.ok(ms < 1000, `the burst took ${Math.round(ms)} ms`);
      });
    } finally {
      await app?.close();
      await proxy.close();
      await cluster.destroy();
    }
  },
});
