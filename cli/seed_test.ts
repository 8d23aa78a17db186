import assert from "node:assert/strict";
import { createProbeClient, type ProbeClient } from "@probe/client";
import { backends, uniqueName } from "../server/testing/app.ts";
import { startLiveServer } from "../server/testing/live.ts";
import { applySeed, parseSeedFile, SeedFileError, type Step } from "./seed.ts";

const actions = (steps: Step[]) =>
  steps.map((s) => `${s.kind} ${s.target ?? s.project} ${s.action}`);

for (const backend of backends()) {
  Deno.test(`seeding from a file [${backend}]`, async (t) => {
    const server = await startLiveServer(backend);
    const client: ProbeClient = createProbeClient({ baseUrl: server.url, apiKey: server.apiKey });
    try {
      await t.step("creates what is missing, then finds everything unchanged", async () => {
        const project = uniqueName("seed");
        const file = parseSeedFile(
          JSON.stringify({
            projects: [{
              project,
              label: "L",
              status: "disabled",
              probes: [{ url: "HTTP://127.0.0.1:9/a#frag", method: "get", headers: { a: "1" } }],
            }],
          }),
          "seed.json",
        );
        assert.deepEqual(actions(await applySeed(client, file)), [
          `project ${project} created`,
          "probe http://127.0.0.1:9/a created",
        ]);
        assert.equal((await client.projects.get({ project })).data.status, "disabled");
        assert.deepEqual(actions(await applySeed(client, file)), [
          `project ${project} unchanged`,
          "probe http://127.0.0.1:9/a unchanged",
        ]);
      });

      await t.step("updates changed projects and rewrites changed probes", async () => {
        const project = uniqueName("seed");
        await client.projects.create({ project, label: "old" });
        await client.probes.create({ project, url: "http://127.0.0.1:9/a", latency: 100 });
        const file = parseSeedFile(
          `projects:\n  - project: ${project}\n    label: new\n    probes:\n      - url: http://127.0.0.1:9/a\n        latency: 200\n`,
          "seed.yaml",
        );
        assert.deepEqual(actions(await applySeed(client, file)), [
          `project ${project} updated`,
          "probe http://127.0.0.1:9/a rewritten",
        ]);
        assert.equal((await client.projects.get({ project })).data.label, "new");
        assert.equal((await client.probes.listByProject({ project })).data[0].latency, 200);
      });

      await t.step("a probe's interval and timeout: seeded, compared, and checked", async () => {
        const project = uniqueName("seed");
        const seed = (probe: Record<string, unknown>) =>
          parseSeedFile(JSON.stringify({ projects: [{ project, probes: [probe] }] }), "s.json");
        const url = "http://127.0.0.1:9/timed";
        await applySeed(client, seed({ url, interval_seconds: 20, timeout_ms: 700 }));
        const [probe] = (await client.probes.listByProject({ project })).data;
        assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [20, 700]);
        assert.deepEqual(
          actions(await applySeed(client, seed({ url, interval_seconds: 20, timeout_ms: 700 }))),
          [`project ${project} unchanged`, `probe ${url} unchanged`],
        );
        // Left out: back to the service-wide settings, so the probe is rewritten.
        assert.deepEqual(actions(await applySeed(client, seed({ url }))), [
          `project ${project} unchanged`,
          `probe ${url} rewritten`,
        ]);
        const [after] = (await client.probes.listByProject({ project })).data;
        assert.deepEqual([after.interval_seconds, after.timeout_ms], [null, null]);
        assert.throws(
          () => seed({ url, interval_seconds: 5, timeout_ms: 200_000 }),
          (error: Error) => {
            assert.ok(error instanceof SeedFileError);
            assert.match(error.message, /projects\.0\.probes\.0\.interval_seconds/);
            assert.match(error.message, /projects\.0\.probes\.0\.timeout_ms/);
            return true;
          },
        );
      });

      await t.step("--prune deletes unlisted probes; --dry-run changes nothing", async () => {
        const project = uniqueName("seed");
        await client.projects.create({ project });
        await client.probes.create({ project, url: "http://127.0.0.1:9/keep" });
        await client.probes.create({ project, url: "http://127.0.0.1:9/drop" });
        const file = parseSeedFile(
          JSON.stringify({ projects: [{ project, probes: [{ url: "http://127.0.0.1:9/keep" }] }] }),
          "seed.json",
        );
        const dry = await applySeed(client, file, { prune: true, dryRun: true });
        assert.deepEqual(actions(dry), [
          `project ${project} unchanged`,
          "probe http://127.0.0.1:9/keep unchanged",
          "probe http://127.0.0.1:9/drop deleted",
        ]);
        assert.equal((await client.probes.listByProject({ project })).meta.count, 2);
        await applySeed(client, file, { prune: true });
        const left = await client.probes.listByProject({ project });
        assert.deepEqual(left.data.map((p) => p.url), ["http://127.0.0.1:9/keep"]);
      });

      await t.step("applies the I'm alive settings once", async () => {
        const file = parseSeedFile(
          "settings:\n  iam_alive: { interval_hours: 7, channels: [webhook] }\n",
          "seed.yaml",
        );
        await client.settings.updateIamAlive({ enabled: false });
        const first = await applySeed(client, file);
        assert.deepEqual(actions(first), ["settings iam_alive updated"]);
        // Reporting was off and the file does not say `enabled`: the step says it turns it on.
        assert.match(first[0].note ?? "", /I'm alive reporting is turned on/);
        assert.deepEqual((await client.settings.getIamAlive()).data, {
          enabled: true,
          interval_hours: 7,
          channels: ["webhook"],
        });
        const again = await applySeed(client, file);
        assert.deepEqual(actions(again), ["settings iam_alive unchanged"]);
        assert.equal(again[0].note, undefined, "already on: nothing to say");
      });
    } finally {
      await server.close();
    }
  });
}

Deno.test("a seed file with mistakes is refused with each one's place", () => {
  const text = JSON.stringify({
    projects: [
      { project: "a", probes: [{ url: "http://x/" }, { url: "http://x/#same" }] },
      { project: "a", status: "paused" },
    ],
  });
  assert.throws(() => parseSeedFile(text, "bad.json"), (error: Error) => {
    assert.ok(error instanceof SeedFileError);
    assert.match(error.message, /projects\.0\.probes\.1\.url: .*listed twice/);
    assert.match(error.message, /projects\.1\.status/);
    return true;
  });
  const twice = JSON.stringify({ projects: [{ project: "a" }, { project: "a" }] });
  assert.throws(() => parseSeedFile(twice, "twice.json"), /projects\.1\.project: listed twice/);
  assert.throws(() => parseSeedFile("projects: [", "broken.yaml"), /cannot be parsed/);
});
