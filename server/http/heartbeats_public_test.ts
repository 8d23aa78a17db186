/**
 * A heartbeat where the public looks: a status page names it by its probe id (`probe_ids`) and
 * shows its state as a probe's, up after a success ping and down after a failure; a badge made
 * for its probe id serves that state; neither ever shows its ping URL's token. On both databases,
 * through the real handler.
 */
import assert from "node:assert/strict";
import { backends, BASE, uniqueName } from "../testing/app.ts";
import { heartbeatApp, heartbeatsPath } from "../testing/heartbeats.ts";

const anonymous = { key: null };

for (const backend of backends()) {
  Deno.test(`a heartbeat on a status page and a badge [${backend}]`, async () => {
    const { app, api } = await heartbeatApp(backend);
    try {
      const project = uniqueName("hp");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      // Pages and badges are cached for seconds: each is read once, after both pings.
      const ids: string[] = [];
      const tokens: string[] = [];
      for (const [name, suffix] of [["backup", ""], ["queue", "/fail"]]) {
        const made = await api.post(heartbeatsPath(project), { name, period_seconds: 3600 });
        assert.equal(made.status, 201, made.text);
        ids.push(made.body.data.probe_id);
        tokens.push(new URL(made.body.data.ping_url).pathname.split("/").at(-1)!);
        const answer = await app.handler(new Request(`${BASE}/ping/${tokens.at(-1)}${suffix}`));
        assert.equal(answer.status, 200, await answer.text());
      }

      const page = await api.patch(`/api/v1/projects/${project}/status-page`, {
        public: true,
        show_urls: true,
        probe_ids: ids,
      });
      assert.equal(page.status, 200, page.text);
      const json = await api.get(`/status/${project}/status.json`, anonymous);
      assert.deepEqual(
        json.body.probes.map((p: { name: string; state: string }) => [p.name, p.state]),
        [["backup", "up"], ["queue", "down"]],
      );
      const html = (await api.get(`/status/${project}`, anonymous)).text;
      const svgs: string[] = [];
      for (const probeId of ids) {
        const badge = await api.post(`/api/v1/projects/${project}/badges`, { probe_id: probeId });
        assert.equal(badge.status, 201, badge.text);
        svgs.push((await api.get(badge.body.data.urls.status_svg, anonymous)).text);
      }
      assert.match(svgs[0], />up</);
      assert.match(svgs[1], />down</);
      // Even with URLs shown, no ping token: it stays the job's secret.
      for (const text of [html, json.text, ...svgs]) {
        for (const token of tokens) assert.ok(!text.includes(token), "no token");
      }
    } finally {
      await app.close();
    }
  });
}
