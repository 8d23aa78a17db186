/**
 * The typed client with probes of every kind: tcp://, tls:// and dns:// probes created, read,
 * listed, changed and run as an HTTP probe is; what a kind has no use for refused (422) with the
 * field named. Against real apps on PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import assert from "node:assert/strict";
import { backends, BASE, startTestApp, TEST_API_KEY, uniqueName } from "../server/testing/app.ts";
import { startDnsResponder } from "../server/testing/dns_responder.ts";
import { createProbeClient, ProbeApiError } from "./mod.ts";

for (const backend of backends()) {
  Deno.test(`the client's probes of each kind [${backend}]`, async () => {
    const app = await startTestApp(backend);
    const dns = await startDnsResponder();
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const accepting = (async () => {
      for await (const conn of listener) conn.close();
    })();
    try {
      const client = createProbeClient({
        baseUrl: BASE,
        apiKey: TEST_API_KEY,
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const project = uniqueName("kc");
      await client.projects.create({ project });
      const tcp = await client.probes.create({
        project,
        url: `tcp://127.0.0.1:${listener.addr.port}`,
        label: "cache",
      });
      const tls = await client.probes.create({
        project,
        url: "tls://mail.example.test:465",
        body: "EHLO probe\r\n",
        expect: { body: { contains: ["250"] }, certificate_days: 14 },
      });
      const query = await client.probes.create({
        project,
        url: `dns://127.0.0.1:${dns.port}/example.test?type=A`,
        expect: { json: [{ path: "", op: "contains", value: "192.0.2.1" }] },
      });
      assert.equal(tcp.meta.created, true);

      const read = await client.probes.get({ project, probeId: tls.data.probe_id });
      assert.equal(read.data.url, "tls://mail.example.test:465");
      assert.equal(read.data.body, "EHLO probe\r\n");
      assert.deepEqual(read.data.expect, { body: { contains: ["250"] }, certificate_days: 14 });
      const listed = await client.probes.listByProject({ project });
      assert.deepEqual(
        listed.data.map((p) => p.url).sort(),
        [tcp.data.url, tls.data.url, query.data.url].sort(),
      );

      const changed = await client.probes.update({
        project,
        probeId: tls.data.probe_id,
        body: null,
        latency: 900,
      });
      assert.equal(changed.data.probe_id, tls.data.probe_id, "the kind's fields keep its id");

      for (const probe of [tcp, query]) {
        const ran = await client.probes.run({ project, probeId: probe.data.probe_id });
        assert.equal(ran.data.outcome, "up", JSON.stringify(ran.data));
        assert.equal(ran.data.http_status, null);
      }

      const refused = await client.probes.create({
        project,
        url: "dns://192.0.2.53/example.test",
        headers: { accept: "x" },
      }).catch((error) => error);
      assert.ok(refused instanceof ProbeApiError);
      assert.equal(refused.status, 422);
      assert.deepEqual(
        refused.details?.map((d: { path: string }) => d.path),
        ["headers"],
      );
    } finally {
      listener.close();
      await accepting.catch(() => {});
      await dns.close();
      await app.close();
    }
  });
}
