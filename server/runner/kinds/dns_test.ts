/**
 * `dns://` runs against a DNS responder on loopback: each record type in its presentation form,
 * each failure in words, the TCP retry on truncation, stray and flooding datagrams, checks on the
 * answers, the network policy on the resolver; and one probe through the interface.
 */
import assert from "node:assert/strict";
import type { Buffer } from "node:buffer";
import dgram from "node:dgram";
// @ts-types="@types/dns-packet"
import * as packet from "dns-packet";
import { createNetworkPolicy, parseNetworks } from "../../base/outbound/network_policy.ts";
import { backends, startTestApp, TestClient, uniqueName } from "../../testing/app.ts";
import { DNS_NAMES, type DnsResponder, startDnsResponder } from "../../testing/dns_responder.ts";
import { closedPort } from "../../testing/target_server.ts";
import { type ExecuteOptions, executeProbe, type ProbeTarget } from "../execute.ts";

const loopbackAllowed = createNetworkPolicy(parseNetworks("127.0.0.0/8"));

function probe(url: string, fields: Partial<ProbeTarget> = {}): ProbeTarget {
  return { url, method: "GET", headers: {}, body: null, latency: null, expect: null, ...fields };
}

function options(over: Partial<ExecuteOptions> = {}): ExecuteOptions {
  return { policy: loopbackAllowed, timeoutMs: 5_000, ...over };
}

/** Runs each case against one responder, closed after. */
async function withResponder(run: (dns: DnsResponder, at: string) => Promise<void>) {
  const dns = await startDnsResponder();
  try {
    await run(dns, `dns://127.0.0.1:${dns.port}`);
  } finally {
    await dns.close();
  }
}

/** Checks that pass only when the answers are exactly `records`, in order, one per line. */
function exactly(records: string[]): ProbeTarget["expect"] {
  return {
    body: { contains: [records.join("\n")] },
    json: [
      ...records.map((value, i) => ({ path: `/${i}`, op: "eq" as const, value })),
      { path: `/${records.length}`, op: "not_exists" as const },
    ],
  };
}

Deno.test("each record type is up, its records in their presentation form", async () => {
  await withResponder(async (_, at) => {
    const cases: [string, string[]][] = [
      ["example.test?type=A", ["192.0.2.1", "192.0.2.2"]],
      ["example.test?type=AAAA", ["2001:db8::1"]],
      ["www.example.test?type=CNAME", ["example.test"]],
      ["example.test?type=MX", ["10 mail.example.test", "20 backup.example.test"]],
      ["example.test?type=TXT", ["v=spf1 -all"]],
      ["example.test?type=NS", ["ns1.example.test", "ns2.example.test"]],
      // Through a CNAME: the records of the type asked, not the alias.
      ["www.example.test?type=A", ["192.0.2.1", "192.0.2.2"]],
    ];
    for (const [query, records] of cases) {
      const run = await executeProbe(
        probe(`${at}/${query}`, { expect: exactly(records) }),
        options({ now: () => 1_000 }),
      );
      assert.equal(run.outcome, "up", `${query}: ${run.error} ${JSON.stringify(run.failedChecks)}`);
      assert.deepEqual(run.failedChecks, [], query);
      assert.equal(run.error, null);
      assert.equal(run.httpStatus, null);
      assert.equal(run.address, "127.0.0.1");
      assert.equal(run.startedAt.getTime(), 1_000);
    }
  });
});

Deno.test("a name that does not exist, SERVFAIL, REFUSED and no records of the type are down in words", async () => {
  await withResponder(async (_, at) => {
    const cases: [string, string][] = [
      ["missing.example.test?type=A", "no such name: missing.example.test"],
      [`${DNS_NAMES.servfail}?type=A`, "the resolver failed (SERVFAIL)"],
      [`${DNS_NAMES.refused}?type=A`, "the resolver refused the query (REFUSED)"],
      ["example.test?type=CNAME", "no CNAME records"],
    ];
    for (const [query, error] of cases) {
      const run = await executeProbe(
        probe(`${at}/${query}`, { expect: { body: { contains: ["x"] } } }),
        options(),
      );
      assert.equal(run.outcome, "down", query);
      assert.equal(run.error, error);
      assert.equal(run.failedChecks, null, "no answer to judge");
      assert.equal(run.address, "127.0.0.1");
    }
  });
});

Deno.test("a truncated answer over UDP is asked again over TCP", async () => {
  await withResponder(async (dns, at) => {
    const run = await executeProbe(
      probe(`${at}/${DNS_NAMES.truncated}?type=A`, { expect: exactly(["192.0.2.53"]) }),
      options(),
    );
    assert.equal(run.outcome, "up", run.error ?? "");
    assert.deepEqual(dns.queries.map((q) => q.transport), ["udp", "tcp"]);
    assert.deepEqual(dns.queries.map((q) => `${q.name} ${q.type}`), [
      `${DNS_NAMES.truncated} A`,
      `${DNS_NAMES.truncated} A`,
    ]);
  });
});

Deno.test("datagrams with another id or question are dropped; the answer to the query is taken", async () => {
  await withResponder(async (_, at) => {
    const run = await executeProbe(
      probe(`${at}/${DNS_NAMES.stray}?type=A`, { expect: exactly(["192.0.2.7"]) }),
      options(),
    );
    assert.equal(run.outcome, "up", JSON.stringify(run.failedChecks));
  });
});

Deno.test("a silent resolver and a flood of strays are down once the probe's timeout passes", async () => {
  await withResponder(async (_, at) => {
    for (const name of [DNS_NAMES.silent, DNS_NAMES.flood]) {
      const began = performance.now();
      // The probe's own timeout wins over the runner's.
      const run = await executeProbe(
        probe(`${at}/${name}?type=A`, { timeoutMs: 300 }),
        options({ timeoutMs: 10_000 }),
      );
      const took = performance.now() - began;
      assert.equal(run.outcome, "down", name);
      assert.equal(run.error, "no answer from the resolver within 300 ms");
      assert.ok(took >= 290 && took < 2_000, `${name} ended after ${Math.round(took)} ms`);
      assert.ok(run.durationMs >= 290, `${run.durationMs}`);
    }
  });
});

Deno.test("over TCP, a resolver that never answers ends at the timeout; one that floods is read no further than one message", async () => {
  await withResponder(async (dns, at) => {
    const began = performance.now();
    const silent = await executeProbe(
      probe(`${at}/${DNS_NAMES.tcpSilent}?type=A`, { timeoutMs: 300 }),
      options(),
    );
    assert.equal(silent.outcome, "down");
    assert.equal(silent.error, "no answer from the resolver within 300 ms");
    assert.ok(performance.now() - began < 2_000);

    const flood = await executeProbe(
      probe(`${at}/${DNS_NAMES.tcpFlood}?type=A`, { timeoutMs: 2_000 }),
      options(),
    );
    assert.equal(flood.outcome, "down");
    assert.equal(flood.error, "the resolver's answer does not answer the query");
    assert.deepEqual(dns.queries.map((q) => q.transport), ["udp", "tcp", "udp", "tcp"]);
  });
});

Deno.test("a resolver on a closed port is down in words when the timeout passes", async () => {
  const run = await executeProbe(
    probe(`dns://127.0.0.1:${closedPort()}/example.test?type=A`, { timeoutMs: 300 }),
    options(),
  );
  assert.equal(run.outcome, "down");
  assert.equal(run.error, "no answer from the resolver within 300 ms");
  assert.equal(run.address, "127.0.0.1");
});

Deno.test("a truncated answer from a resolver that takes no TCP is down: resolver unreachable", async () => {
  // A UDP-only resolver: every answer truncated, and nothing listens on TCP at its port.
  const udp = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  udp.on("message", (bytes: Buffer, from: dgram.RemoteInfo) => {
    const query = packet.decode(bytes);
    const reply = packet.encode({
      type: "response",
      id: query.id,
      flags: packet.TRUNCATED_RESPONSE,
      questions: query.questions,
    });
    udp.send(reply, from.port, from.address);
  });
  try {
    const run = await executeProbe(
      probe(`dns://127.0.0.1:${udp.address().port}/example.test?type=TXT`),
      options(),
    );
    assert.equal(run.outcome, "down");
    assert.equal(run.error, "resolver unreachable (connection refused)");
  } finally {
    await new Promise<void>((resolve) => udp.close(() => resolve()));
  }
});

Deno.test("checks on the answers pass and fail through the assertion model", async () => {
  await withResponder(async (_, at) => {
    const url = `${at}/example.test?type=A`;
    const passing = await executeProbe(
      probe(url, {
        expect: {
          body: { contains: ["192.0.2.1"], not_contains: ["203.0.113."] },
          json: [
            { path: "", op: "contains", value: "192.0.2.2" },
            { path: "/0", op: "eq", value: "192.0.2.1" },
          ],
        },
      }),
      options(),
    );
    assert.equal(passing.outcome, "up");
    assert.deepEqual(passing.failedChecks, []);

    const failing = await executeProbe(
      probe(url, {
        expect: {
          body: { contains: ["192.0.2.9"] },
          json: [
            { path: "", op: "contains", value: "192.0.2.9" },
            { path: "/0", op: "eq", value: "192.0.2.2" },
          ],
        },
      }),
      options(),
    );
    assert.equal(failing.outcome, "down");
    assert.equal(failing.error, "assertion failed: body.contains.0, json.0, json.1");
    assert.deepEqual(failing.failedChecks?.map((f) => [f.check, f.seen]), [
      ["body.contains.0", "192.0.2.1 192.0.2.2"],
      ["json.0", '["192.0.2.1","192.0.2.2"]'],
      ["json.1", '"192.0.2.1"'],
    ]);
  });
});

Deno.test("an answer slower than the probe's latency is degraded; latency is the query's round trip", async () => {
  await withResponder(async (_, at) => {
    // Each reading of the clock is 40 ms after the last: the query is sent at one reading and
    // answered at the next.
    let clock = 0;
    const run = await executeProbe(
      probe(`${at}/example.test?type=A`, { latency: 30 }),
      options({ elapsed: () => (clock += 40) }),
    );
    assert.equal(run.outcome, "degraded");
    assert.equal(run.error, "slower than 30 ms");
    assert.equal(run.durationMs, 40);
  });
});

Deno.test("the network policy judges the resolver's address, by name or literal", async () => {
  await withResponder(async (dns) => {
    const blocked = await executeProbe(
      probe(`dns://127.0.0.1:${dns.port}/example.test?type=A`),
      options({ policy: createNetworkPolicy() }),
    );
    assert.equal(blocked.outcome, "blocked");
    assert.equal(blocked.error, "blocked: 127.0.0.1 is loopback (not in PROBE_ALLOW_NETWORKS)");
    assert.equal(blocked.address, "127.0.0.1");

    // A resolver by name: resolved once, checked, and asked at the checked address only.
    const asked: string[] = [];
    const byName = (address: string) =>
      options({
        resolve: (host) => {
          asked.push(host);
          return Promise.resolve([address]);
        },
      });
    const up = await executeProbe(
      probe(`dns://resolver.test:${dns.port}/example.test?type=A`),
      byName("127.0.0.1"),
    );
    assert.equal(up.outcome, "up", up.error ?? "");
    assert.equal(up.address, "127.0.0.1");
    const refused = await executeProbe(
      probe(`dns://resolver.test:${dns.port}/example.test?type=A`),
      byName("169.254.169.254"),
    );
    assert.equal(refused.outcome, "blocked");
    assert.match(refused.error ?? "", /169\.254\.169\.254 is link-local/);
    assert.deepEqual(asked, ["resolver.test", "resolver.test"]);
    assert.equal(dns.queries.length, 1, "only the allowed run reached the resolver");

    const unknown = await executeProbe(
      probe(`dns://resolver.test:${dns.port}/example.test?type=A`),
      options({ resolve: () => Promise.reject(Object.assign(new Error(), { code: "ENOTFOUND" })) }),
    );
    assert.equal(unknown.outcome, "down");
    assert.equal(unknown.error, "the resolver's name did not resolve (DNS: ENOTFOUND)");
  });
});

for (const backend of backends()) {
  Deno.test(`a dns:// probe through the interface [${backend}]`, async () => {
    const dns = await startDnsResponder();
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    try {
      const project = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const created = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `dns://127.0.0.1:${dns.port}/Example.Test.?type=mx`,
        expect: {
          body: { contains: ["10 mail.example.test"] },
          json: [{ path: "/1", op: "eq", value: "20 backup.example.test" }],
        },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.data.url, `dns://127.0.0.1:${dns.port}/example.test?type=MX`);
      const path = `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`;

      const ran = await api.post(`${path}/run`);
      assert.equal(ran.status, 200, ran.text);
      assert.equal(ran.body.data.outcome, "up", ran.text);
      assert.equal(ran.body.data.http_status, null);

      const missing = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `dns://127.0.0.1:${dns.port}/missing.example.test?type=A`,
      });
      assert.equal(missing.status, 201, missing.text);
      const down = await api.post(
        `/api/v1/projects/${project}/probes/${missing.body.data.probe_id}/run`,
      );
      assert.equal(down.status, 200, down.text);
      assert.equal(down.body.data.outcome, "down");
      assert.equal(down.body.data.error, "no such name: missing.example.test");

      const results = await api.get(`${path}/results`);
      assert.equal(results.status, 200, results.text);
      assert.equal(results.body.meta.count, 1);
      assert.equal(results.body.data[0].outcome, "up");
      assert.deepEqual(results.body.data[0].failed_checks, []);
    } finally {
      await app.close();
      await dns.close();
    }
  });
}
