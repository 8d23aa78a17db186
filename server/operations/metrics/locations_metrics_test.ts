// The per-location series of GET /metrics, through the real handler on each database: runners
// seen, last seen, checks per minute, schedule lag and probes of the built-in location and of a
// remote one whose runner posts through the runner protocol; and the bound on their labels.
import assert from "node:assert/strict";
import { createApp } from "../../app.ts";
import { createLogger } from "../../base/log.ts";
import {
  backends,
  freshDatabase,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../../testing/app.ts";
import { runRemotely } from "../../testing/remote_runs.ts";
import { MAX_LABELLED_LOCATIONS } from "./locations.ts";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

const valueOf = (samples: Sample[], name: string, location: string) => {
  const found = samples.filter((s) => s.name === name && s.labels.location === location);
  assert.ok(found.length <= 1, `${name} ${location}: ${found.length} samples`);
  return found[0]?.value;
};

for (const backend of backends()) {
  Deno.test(`/metrics: per-location runner figures, with bounded labels [${backend}]`, async () => {
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      iamAlive: { writeLine: () => {} },
      remoteRuns: { syncEveryMs: 0 },
      config: { runnerLocation: "home" },
    });
    try {
      const api = new TestClient(app.handler);
      const scrape = async () => {
        const res = await api.get("/metrics");
        assert.equal(res.status, 200);
        return parse(res.text);
      };
      const before = await scrape();
      assert.equal(valueOf(before, "location_runners", "home"), 0);
      assert.equal(valueOf(before, "location_probes", "home"), 0);
      assert.equal(valueOf(before, "location_last_seen_timestamp_seconds", "home"), undefined);

      const name = uniqueName("loc");
      const token = (await api.post("/api/v1/locations", { name })).body.data.token;
      const project = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      for (const path of ["a", "b", "c"]) {
        const made = await api.post(`/api/v1/projects/${project}/probes`, {
          url: `https://example.com/${path}`,
          // A run's next one is the probe's next grid slot, which at the default minute can be
          // milliseconds away: due and unclaimed (a lag) by the scrape on a slow machine.
          interval_seconds: 86_400,
          locations: path === "c" ? ["home"] : ["home", name],
        });
        assert.equal(made.status, 201, made.text);
      }
      const unclaimed = await scrape();
      assert.equal(valueOf(unclaimed, "location_probes", name), 2);
      assert.equal(valueOf(unclaimed, "location_probes", "home"), 3);
      assert.equal(valueOf(unclaimed, "location_runners", name), 0);
      const remote = unclaimed.find((s) => s.name === "locations" && s.labels.kind === "remote");
      assert.equal(remote?.value, 1);

      const seenFrom = Date.now() / 1000;
      assert.equal(await runRemotely(app.handler, token), 2);
      const after = await scrape();
      assert.equal(valueOf(after, "location_runners", name), 1);
      assert.equal(valueOf(after, "location_checks_per_minute", name), 2);
      assert.equal(valueOf(after, "location_checks_per_minute", "home"), 0);
      assert.equal(valueOf(after, "location_schedule_lag_seconds", name), 0);
      const seen = valueOf(after, "location_last_seen_timestamp_seconds", name);
      assert.ok(seen !== undefined && seen >= seenFrom - 1, `${seen} ${seenFrom}`);
      const kinds = after.filter((s) => s.name === "location_runners").map((s) => s.labels.kind);
      assert.deepEqual(kinds.sort(), ["local", "remote"]);

      // However many locations there are, at most MAX_LABELLED_LOCATIONS get series.
      for (let i = 0; i < MAX_LABELLED_LOCATIONS; i++) {
        const res = await api.post("/api/v1/locations", {
          name: `many-${String(i).padStart(3, "0")}`,
        });
        assert.equal(res.status, 201);
      }
      const many = await scrape();
      const labelled = many.filter((s) => s.name === "location_probes");
      assert.equal(labelled.length, MAX_LABELLED_LOCATIONS);
      assert.equal(labelled[0].labels.location, "home", "the built-in location comes first");
      const all = many.find((s) => s.name === "locations" && s.labels.kind === "remote");
      assert.equal(all?.value, MAX_LABELLED_LOCATIONS + 1);
    } finally {
      await app.close();
    }
  });
}
