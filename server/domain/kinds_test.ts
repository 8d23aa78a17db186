/**
 * Probes of every kind through the REST interface, on both databases: the URL forms and what
 * each kind refuses (422 naming the field), HTTP's answers unchanged, and a `tcp://` probe on a
 * local listener run by the built-in runner, by run-now and by a remote runner.
 */
import assert from "node:assert/strict";
import { createLogger } from "../base/log.ts";
import { createServiceClient } from "../runner/remote/client.ts";
import { createRemoteRunner } from "../runner/remote/runner.ts";
import { executeProbe } from "../runner/execute.ts";
import { createRunner } from "../runner/runner.ts";
import {
  apiSuite,
  backends,
  BASE,
  LOOPBACK_ONLY,
  startTestApp,
  type TestClient,
  TestClient as Client,
  uniqueName,
} from "../testing/app.ts";
import { makeLocation } from "../testing/remote_runs.ts";
import { fakeClock } from "../testing/runner_clock.ts";

async function project(api: TestClient): Promise<string> {
  const name = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project: name })).status, 201);
  return name;
}

/** A loopback TCP listener that accepts and keeps each connection until its peer closes. */
function tcpListener() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let accepted = 0;
  let closed = false;
  const served = (async () => {
    for await (const conn of listener) {
      accepted++;
      (async () => {
        const buffer = new Uint8Array(1024);
        while (await conn.read(buffer).catch(() => null) !== null) { /* until closed */ }
        conn.close();
      })();
    }
  })().catch(() => {});
  return {
    url: `tcp://127.0.0.1:${port}`,
    /**
     * The connections it took, once they are `expected` or 5 s have passed: a check that saw its
     * connection accepted by the kernel may answer before this loop has taken it.
     */
    async accepted(expected: number) {
      for (let i = 0; i < 500 && accepted < expected; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return accepted;
    },
    async close() {
      if (!closed) listener.close();
      closed = true;
      await served;
    },
  };
}

apiSuite("probe kinds", (test) => {
  test("tcp, tls and dns probes are created (201) with their URL normalised", async ({ api }) => {
    const p = await project(api);
    const cases = [
      ["TCP://DB.Example.COM:5432/", "tcp://db.example.com:5432"],
      ["tcp://[::1]:6379", "tcp://[::1]:6379"],
      ["tls://Example.com:443", "tls://example.com:443"],
      ["dns://1.1.1.1/Example.COM.?type=mx", "dns://1.1.1.1/example.com?type=MX"],
      ["dns://9.9.9.9:5353/example.org", "dns://9.9.9.9:5353/example.org?type=A"],
    ];
    for (const [sent, stored] of cases) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, { url: sent });
      assert.equal(res.status, 201, `${sent}: ${res.text}`);
      assert.equal(res.body.data.url, stored);
      const got = await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`);
      assert.equal(got.status, 200);
      assert.equal(got.body.data.url, stored);
    }
    const withBody = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "tcp://redis.test:6379",
      body: "PING\r\n",
      expect: { body: { contains: ["PONG"] } },
    });
    assert.equal(withBody.status, 201, withBody.text);
    const got = await api.get(`/api/v1/projects/${p}/probes/${withBody.body.data.probe_id}`);
    assert.equal(got.body.data.body, "PING\r\n");
    assert.deepEqual(got.body.data.expect, { body: { contains: ["PONG"] } });
  });

  test("other schemes and malformed kind URLs are 422 on url", async ({ api }) => {
    const p = await project(api);
    for (
      const [url, message] of [
        ["ftp://files.example.com/", /must be an absolute URL of one of the forms/],
        ["tcp://db.example.com", /must name a port/],
        ["tcp://db.example.com:5432/path", /must have no path/],
        ["dns://1.1.1.1/example.com?type=SOA", /type must be one of/],
      ] as const
    ) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, { url });
      assert.equal(res.status, 422, `${url}: ${res.text}`);
      assert.equal(res.body.error.details[0].path, "url");
      assert.match(res.body.error.details[0].message, message);
    }
  });

  test("fields a kind has no use for are 422 naming the field", async ({ api }) => {
    const p = await project(api);
    const refused: [Record<string, unknown>, string, string][] = [
      [
        { url: "tcp://a.test:1", method: "POST" },
        "method",
        "tcp://host:port probes take no method",
      ],
      [
        { url: "tcp://a.test:1", headers: { a: "b" } },
        "headers",
        "tcp://host:port probes take no headers",
      ],
      [
        { url: "tls://a.test:443", expect: { status: [200] } },
        "expect.status",
        "tls://host:port probes cannot check status",
      ],
      [
        { url: "dns://1.1.1.1/a.test", body: "x" },
        "body",
        "dns://resolver[:port]/name?type=A|AAAA|CNAME|MX|TXT|NS probes take no body",
      ],
      [
        { url: "dns://1.1.1.1/a.test", method: "POST" },
        "method",
        "dns://resolver[:port]/name?type=A|AAAA|CNAME|MX|TXT|NS probes take no method",
      ],
      [
        { url: "tcp://a.test:1", body: { ping: true } },
        "body",
        "must be text: the bytes sent once connected, as UTF-8",
      ],
    ];
    for (const [input, path, message] of refused) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, input);
      assert.equal(res.status, 422, `${JSON.stringify(input)}: ${res.text}`);
      assert.deepEqual(
        res.body.error.details.find((d: { path: string }) => d.path === path),
        { path, message },
        res.text,
      );
    }
    const listed = await api.get(`/api/v1/projects/${p}/probes`);
    assert.equal(listed.body.data.length, 0, "nothing refused was stored");
  });

  test("PATCH of a tcp probe: headers refused, a new http URL accepted", async ({ api }) => {
    const p = await project(api);
    const created = await api.post(`/api/v1/projects/${p}/probes`, { url: "tcp://db.test:5432" });
    const path = `/api/v1/projects/${p}/probes/${created.body.data.probe_id}`;
    const headers = await api.patch(path, { headers: { "X-A": "1" } });
    assert.equal(headers.status, 422, headers.text);
    assert.deepEqual(headers.body.error.details, [
      { path: "headers", message: "tcp://host:port probes take no headers" },
    ]);
    const status = await api.patch(path, { expect: { status: [200] } });
    assert.equal(status.status, 422, status.text);
    assert.equal(status.body.error.details[0].path, "expect.status");
    assert.equal((await api.get(path)).body.data.url, "tcp://db.test:5432", "unchanged");

    const moved = await api.patch(path, { url: "http://db.test/health" });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.data.url, "http://db.test/health");
    const now = `/api/v1/projects/${p}/probes/${moved.body.data.probe_id}`;
    const withHeaders = await api.patch(now, { headers: { "X-A": "1" } });
    assert.equal(withHeaders.status, 200, "an http probe takes headers");
  });

  test("a tcp probe read and written back is the same probe", async ({ api }) => {
    const p = await project(api);
    const created = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "tcp://db.test:5432",
      body: "PING\r\n",
      expect: { body: { contains: ["+PONG"] } },
    });
    const path = `/api/v1/projects/${p}/probes/${created.body.data.probe_id}`;
    const read = (await api.get(path)).body.data;
    const { url, method, headers, body, latency, label, expect } = read;
    const again = await api.post(`/api/v1/projects/${p}/probes`, {
      url,
      method,
      headers,
      body,
      latency,
      label,
      expect,
    });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.data.probe_id, created.body.data.probe_id);
  });

  test("an HTTP probe's create and read answers are as before", async ({ api }) => {
    // Its every default read back is pinned by probes_test.ts; here, beside the kinds' rules,
    // the fields other kinds refuse are taken and read back as sent.
    const p = await project(api);
    const sent = {
      url: "https://example.com/up#top",
      method: "POST",
      headers: { "X-Trace": "1" },
      body: { ping: true },
      expect: { status: [200], headers: [{ name: "server", op: "exists" }] },
    };
    const res = await api.post(`/api/v1/projects/${p}/probes`, sent);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body, {
      data: { project: p, url: "https://example.com/up", probe_id: res.body.data.probe_id },
      meta: { created: true },
    });
    const got = (await api.get(`/api/v1/projects/${p}/probes/${res.body.data.probe_id}`)).body;
    const { url: _, ...fields } = sent;
    assert.deepEqual({ ...got.data, ...fields }, got.data, "every field as sent");
    assert.equal(got.data.url, "https://example.com/up");
  });
});

const INTERVAL = 60_000;

for (const backend of backends()) {
  Deno.test(`a tcp probe runs everywhere a probe runs [${backend}]`, async (t) => {
    const app = await startTestApp(backend);
    const api = new Client(app.handler);
    const listener = tcpListener();
    try {
      const p = await project(api);
      await api.patch(`/api/v1/projects/${p}/alerts`, { failure_threshold: 1 });
      const created = await api.post(`/api/v1/projects/${p}/probes`, {
        url: listener.url,
        label: "Database port",
      });
      assert.equal(created.status, 201, created.text);
      const path = `/api/v1/projects/${p}/probes/${created.body.data.probe_id}`;

      await t.step("run-now answers the run's verdict", async () => {
        const run = await api.post(`${path}/run`);
        assert.equal(run.status, 200, run.text);
        assert.equal(run.body.data.outcome, "up");
        assert.equal(run.body.data.error, null);
        assert.equal(run.body.data.http_status, null);
        assert.equal(await listener.accepted(1), 1);
      });

      const eu = await makeLocation(api);
      const elsewhere = tcpListener();
      const remote = await api.post(`/api/v1/projects/${p}/probes`, {
        url: elsewhere.url,
        locations: [eu.name],
      });
      assert.equal(remote.status, 201, remote.text);
      const remotePath = `/api/v1/projects/${p}/probes/${remote.body.data.probe_id}`;

      await t.step("a remote runner runs it at its location", async () => {
        const client = createServiceClient({
          serviceUrl: BASE,
          token: eu.token,
          fetch: (input, init) => app.handler(new Request(input, init)),
        });
        const runner = createRemoteRunner({
          client,
          execute: (target) => executeProbe(target, { policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
          log: createLogger("silent"),
          runner: "test-remote",
          version: "test-1",
          concurrency: 4,
          bufferMax: 100,
          bufferMaxAgeMs: 60_000,
          flushEveryMs: 10,
        });
        runner.start();
        try {
          for (let i = 0; i < 500 && runner.counters().recorded < 1; i++) {
            await new Promise((r) => setTimeout(r, 10));
          }
        } finally {
          await runner.stop(1_000);
          await elsewhere.close();
        }
        assert.equal(await elsewhere.accepted(1), 1);
        const results = await api.get(`${remotePath}/results?location=${eu.name}`);
        assert.equal(results.body.meta.count, 1, results.text);
        assert.equal(results.body.data[0].outcome, "up");
        assert.equal(results.body.data[0].error, null);
      });

      await t.step(
        "the built-in runner: up, then down in words when the listener stops",
        async () => {
          const start = Math.ceil(Date.now() / INTERVAL) * INTERVAL;
          const { fake, clock } = fakeClock(start);
          const runner = createRunner({
            db: app.database.db,
            log: createLogger("silent"),
            intervalMs: INTERVAL,
            timeoutMs: 2_000,
            concurrency: 4,
            retentionDays: 7,
            policy: LOOPBACK_ONLY,
            lookaheadMs: 0,
            retryPauseMs: 1,
            // Rows due before the runner started (run-now's) are not spread over an interval.
            restartSpreadMs: 0,
            clock,
          });
          await runner.sync();
          assert.equal(await runner.poll(), 1);
          await runner.idle();
          const up = await api.get(path);
          assert.equal(up.body.data.state, "up");

          await listener.close();
          fake.tick(INTERVAL);
          assert.equal(await runner.poll(), 1);
          await runner.idle();
          const down = await api.get(path);
          assert.equal(down.body.data.state, "down");
          const [last] = (await api.get(`${path}/results?location=local`)).body.data;
          assert.equal(last.outcome, "down");
          assert.equal(last.error, "connection refused");
          assert.equal(last.trigger, "schedule");

          const now = await api.post(`${path}/run`);
          assert.equal(now.body.data.outcome, "down");
          assert.equal(now.body.data.error, "connection refused");
        },
      );
    } finally {
      await listener.close();
      await app.close();
    }
  });
}
