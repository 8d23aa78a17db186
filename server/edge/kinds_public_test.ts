/**
 * TCP and DNS probes where the public and the scrapers look: a public status page shows them as
 * it shows an HTTP probe (their state, their URL only with show_urls, never an error text or an
 * address); a badge serves their state and latency; `/metrics` has their per-probe series; their
 * chart, stats and overview row have their latency (connect time, query time). Real runs (run
 * now) against a TCP listener and a DNS responder on loopback, on both databases.
 */
import assert from "node:assert/strict";
import { apiSuite, uniqueName } from "../testing/app.ts";
import { startDnsResponder } from "../testing/dns_responder.ts";

const anonymous = { key: null };

apiSuite("tcp and dns probes on status pages, badges and metrics", (test) => {
  test("a public page and a badge show them like an HTTP probe; /metrics has their series", async ({ api }) => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const accepting = (async () => {
      for await (const conn of listener) conn.close();
    })();
    const dns = await startDnsResponder();
    try {
      const project = uniqueName("kp");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const tcpUrl = `tcp://127.0.0.1:${listener.addr.port}`;
      const dnsUrl = `dns://127.0.0.1:${dns.port}/example.test?type=A`;
      const ids: string[] = [];
      for (const url of [tcpUrl, dnsUrl]) {
        const created = await api.post(`/api/v1/projects/${project}/probes`, { url });
        assert.equal(created.status, 201, created.text);
        assert.equal(created.body.data.url, url);
        ids.push(created.body.data.probe_id);
        for (let i = 0; i < 2; i++) {
          const ran = await api.post(`/api/v1/projects/${project}/probes/${ids.at(-1)}/run`);
          assert.equal(ran.status, 200, ran.text);
          assert.equal(ran.body.data.outcome, "up", ran.text);
          assert.equal(ran.body.data.http_status, null);
        }
      }

      // Their latency (connect time, query time) in the chart, the stats and the overview.
      const overview = (await api.get(`/api/v1/overview?project=${project}`)).body.data;
      for (const id of ids) {
        const path = `/api/v1/projects/${project}/probes/${id}`;
        const series = (await api.get(`${path}/series?window=1h`)).body.data;
        assert.ok(series.buckets.some((b: { p50: number | null }) => b.p50 !== null), id);
        const stats = (await api.get(`${path}/stats`)).body.data;
        assert.equal(typeof stats.p95, "number", JSON.stringify(stats));
        const row = overview.projects[0].probes.find((p: { probe_id: string }) =>
          p.probe_id === id
        );
        assert.equal(typeof row.p95_24h, "number", JSON.stringify(row));
      }

      // Public, without URLs: named by their place, never by address or port.
      assert.equal(
        (await api.patch(`/api/v1/projects/${project}/status-page`, { public: true })).status,
        200,
      );
      const page = (await api.get(`/status/${project}/status.json`, anonymous)).body;
      assert.deepEqual(
        page.probes.map((p: { name: string; url: string | null; state: string }) => [
          p.name,
          p.url,
          p.state,
        ]),
        [["Check 1", null, "up"], ["Check 2", null, "up"]],
      );
      const html = (await api.get(`/status/${project}`, anonymous)).text;
      for (const hidden of ["127.0.0.1", String(listener.addr.port), "example.test", ...ids]) {
        assert.ok(!html.includes(hidden), `the page holds "${hidden}"`);
      }
      // With show_urls: each URL as stored (neither holds a credential; dns's one query value is
      // its record type).
      await api.patch(`/api/v1/projects/${project}/status-page`, { show_urls: true });
      const shown = (await api.get(`/status/${project}/status.json`, anonymous)).body;
      assert.deepEqual(
        shown.probes.map((p: { name: string; url: string | null }) => [p.name, p.url]),
        [[tcpUrl, tcpUrl], [dnsUrl, dnsUrl]],
      );

      // A badge of the TCP probe: its state.
      const badge = await api.post(`/api/v1/projects/${project}/badges`, { probe_id: ids[0] });
      assert.equal(badge.status, 201, badge.text);
      const svg = await api.get(badge.body.data.urls.status_svg, anonymous);
      assert.equal(svg.status, 200);
      assert.match(svg.text, />up</);
      const latency = await api.get(`${badge.body.data.urls.json}?kind=latency`, anonymous);
      assert.equal(latency.status, 200, latency.text);
      assert.match(latency.body.message, /\d+ ms/);

      // /metrics: probe_up, probe_latency_seconds and probe_state for each, labelled as an
      // HTTP probe's are (project and probe_id, never the URL).
      const metrics = await api.get("/metrics");
      assert.equal(metrics.status, 200);
      for (const id of ids) {
        const labels = `{project="${project}",probe_id="${id}"}`;
        assert.match(metrics.text, new RegExp(`^probe_up${escape(labels)} 1$`, "m"));
        assert.match(metrics.text, new RegExp(`^probe_state${escape(labels)} 1$`, "m"));
        assert.match(
          metrics.text,
          new RegExp(`^probe_latency_seconds${escape(labels)} \\d+(\\.\\d+)?(e-\\d+)?$`, "m"),
        );
      }
      assert.ok(!metrics.text.includes("tcp://") && !metrics.text.includes("dns://"));
    } finally {
      listener.close();
      await accepting.catch(() => {});
      await dns.close();
    }
  });
});

const escape = (text: string) => text.replace(/[{}"]/g, (c) => `\\${c}`);
