// GET /metrics's heartbeat series through the real handler, on each database: a heartbeat's state
// before its first ping, after a success and after a failure, the age of its last ping, and none
// of them with METRICS_PER_PROBE off.
import assert from "node:assert/strict";
import { createApp } from "../../app.ts";
import { createLogger } from "../../base/log.ts";
import {
  backends,
  BASE,
  freshDatabase,
  TEST_API_KEY,
  TEST_READ_KEY,
  TestClient,
  uniqueName,
} from "../../testing/app.ts";
import { HEARTBEAT_STATE_VALUES } from "./heartbeats.ts";

const reader = { "x-service-api-key": TEST_READ_KEY };

async function appOn(backend: string, perProbe = true) {
  return await createApp({
    database: await freshDatabase(backend as "pglite" | "postgres"),
    apiKeys: [TEST_API_KEY],
    log: createLogger("silent"),
    config: { readOnlyApiKeys: [TEST_READ_KEY], metricsPerProbe: perProbe },
    iamAlive: { writeLine: () => {} },
  });
}

/** The value of `name` for this heartbeat in a scrape; undefined when there is none. */
function sample(text: string, name: string, project: string, heartbeat: string) {
  const line = text.split("\n").find((l) =>
    l.startsWith(`${name}{`) && l.includes(`project="${project}"`) &&
    l.includes(`heartbeat="${heartbeat}"`)
  );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

for (const backend of backends()) {
  Deno.test(`metrics: heartbeat state and last-ping age [${backend}]`, async () => {
    const app = await appOn(backend);
    try {
      const api = new TestClient(app.handler);
      const project = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const made = await api.post(`/api/v1/projects/${project}/heartbeats`, {
        name: "nightly",
        period_seconds: 3600,
      });
      assert.equal(made.status, 201, made.text);
      const url = new URL(made.body.data.ping_url);
      const scrape = async () => {
        const answer = await app.handler(new Request(`${BASE}/metrics`, { headers: reader }));
        assert.equal(answer.status, 200);
        return await answer.text();
      };
      const ping = async (suffix = "") => {
        const answer = await app.handler(new Request(`${BASE}${url.pathname}${suffix}`));
        assert.equal(answer.status, 200, await answer.text());
      };

      let text = await scrape();
      assert.match(text, /# TYPE heartbeat_state gauge/);
      assert.equal(sample(text, "heartbeat_state", project, "nightly"), HEARTBEAT_STATE_VALUES.new);
      assert.equal(
        sample(text, "heartbeat_last_ping_age_seconds", project, "nightly"),
        undefined,
        "no age before the first ping",
      );

      await ping();
      text = await scrape();
      assert.equal(sample(text, "heartbeat_state", project, "nightly"), 1);
      const age = sample(text, "heartbeat_last_ping_age_seconds", project, "nightly")!;
      assert.ok(age >= 0 && age < 30, `age ${age}`);

      await ping("/fail");
      text = await scrape();
      assert.equal(sample(text, "heartbeat_state", project, "nightly"), 3, "down, as probe_state");
      assert.ok(!text.includes(url.pathname.split("/").at(-1)!), "no token in a label");
    } finally {
      await app.close();
    }
  });

  Deno.test(`metrics: no heartbeat series with METRICS_PER_PROBE off [${backend}]`, async () => {
    const app = await appOn(backend, false);
    try {
      const api = new TestClient(app.handler);
      const project = uniqueName();
      await api.post("/api/v1/projects", { project });
      await api.post(`/api/v1/projects/${project}/heartbeats`, { name: "x", period_seconds: 60 });
      const answer = await app.handler(new Request(`${BASE}/metrics`, { headers: reader }));
      const text = await answer.text();
      assert.ok(!text.includes("heartbeat_state"), "no heartbeat series");
    } finally {
      await app.close();
    }
  });
}
