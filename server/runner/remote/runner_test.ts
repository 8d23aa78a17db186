import assert from "node:assert/strict";
import type { ClaimedRun, ResultsPostAnswer, ResultsPostInput } from "@probe/shared";
import { createLogger } from "../../base/log.ts";
import type { Call, ServiceClient } from "./client.ts";
import { createRemoteRunner } from "./runner.ts";
import { gridAfter, offsetOf } from "../../domain/schedule.ts";

const run = (id: string): ClaimedRun => ({
  run_id: id,
  due_at: new Date().toISOString(),
  lease_until: new Date(Date.now() + 30_000).toISOString(),
  url: "http://127.0.0.1:9/",
  method: "GET",
  headers: {},
  body: null,
  latency: null,
  expect: null,
  timeout_ms: 1000,
  interval_seconds: 60,
});

/** The runner's settings every test shares: small, quick to flush, silent. */
const SETTINGS = {
  log: createLogger("silent"),
  runner: "r1",
  version: "1",
  concurrency: 10,
  bufferMax: 100,
  bufferMaxAgeMs: 60_000,
  flushEveryMs: 10,
};

/** A service that hands out `runs` once, and answers posts as `link` says. */
function fakeService(runs: ClaimedRun[]) {
  const state = {
    link: "up" as "up" | "down",
    posted: [] as ResultsPostInput[],
    conflict: new Set<string>(),
    /** Runs handed out by the next claim, once. */
    more: [] as ClaimedRun[],
  };
  let handed = false;
  const client: ServiceClient = {
    async claim(_input, signal) {
      if (state.link === "down") return { ok: false, kind: "unreachable", reason: "cut" };
      if (!handed) {
        handed = true;
        return { ok: true, data: { location: "eu", runs } };
      }
      if (state.more.length > 0) {
        const more = state.more;
        state.more = [];
        return { ok: true, data: { location: "eu", runs: more } };
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, 50);
        signal?.addEventListener("abort", () => (clearTimeout(t), r()));
      });
      return { ok: true, data: { location: "eu", runs: [] } };
    },
    post(input): Promise<Call<ResultsPostAnswer>> {
      if (state.link === "down") {
        return Promise.resolve({ ok: false, kind: "unreachable", reason: "cut" });
      }
      const refused = input.results.filter((r) => state.conflict.has(r.run_id));
      if (refused.length > 0) {
        return Promise.resolve({
          ok: false,
          kind: "conflict",
          runIds: refused.map((r) => r.run_id),
        });
      }
      state.posted.push(input);
      return Promise.resolve({
        ok: true,
        data: {
          results: input.results.map((r) => ({ run_id: r.run_id, status: "recorded" as const })),
          recorded: input.results.length,
          duplicate: 0,
          expired: 0,
        },
      });
    },
  };
  return { client, state };
}

/** What the executor answers for a run that went well. */
const upRun = () =>
  Promise.resolve({
    startedAt: new Date(),
    durationMs: 5,
    outcome: "up" as const,
    httpStatus: 200,
    error: null,
    address: "127.0.0.1",
  });

async function until(check: () => boolean) {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check());
}

Deno.test("results wait while the service cannot be reached, and go once it can", async () => {
  const { client, state } = fakeService([run("a"), run("b"), run("c")]);
  state.link = "down";
  let locationSeen = "";
  const runner = createRemoteRunner({
    client,
    execute: (_target, location) => {
      locationSeen = location;
      return upRun();
    },
    ...SETTINGS,
  });
  runner.start();
  // Nothing claimed while down; then the link comes back.
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(runner.counters().claimed, 0);
  state.link = "up";
  await until(() => runner.counters().ran === 3);
  assert.equal(locationSeen, "eu");
  // Each result goes once.
  await until(() => runner.counters().recorded === 3);
  await runner.stop(1000);
  const posted = state.posted.flatMap((p) => p.results.map((r) => r.run_id)).sort();
  assert.deepEqual(posted, ["a", "b", "c"]);
  assert.equal(runner.counters().buffered, 0);
});

Deno.test("results the service refuses as never this location's are dropped", async () => {
  const { client, state } = fakeService([run("mine"), run("foreign")]);
  state.conflict.add("foreign");
  const runner = createRemoteRunner({
    client,
    execute: () =>
      Promise.resolve({
        startedAt: new Date(),
        durationMs: 5,
        outcome: "down",
        httpStatus: null,
        error: "connection refused",
        address: null,
      }),
    ...SETTINGS,
  });
  runner.start();
  await until(() => runner.counters().recorded === 1);
  await runner.stop(1000);
  assert.equal(runner.counters().refused, 1);
  assert.equal(runner.counters().buffered, 0);
  assert.deepEqual(state.posted.flatMap((p) => p.results.map((r) => r.run_id)), ["mine"]);
});

Deno.test("a run still in flight when the runner stops has its result posted", async () => {
  const { client, state } = fakeService([run("late")]);
  const finish = Promise.withResolvers<void>();
  let started = false;
  const runner = createRemoteRunner({
    client,
    execute: async () => {
      started = true;
      await finish.promise;
      return {
        startedAt: new Date(),
        durationMs: 5,
        outcome: "up",
        httpStatus: 200,
        error: null,
        address: "127.0.0.1",
      };
    },
    ...SETTINGS,
  });
  runner.start();
  await until(() => started);
  // Stopping while the run is under way, with nothing waiting to be posted: the flush loop
  // must not end before the run does.
  const stopped = runner.stop(2000);
  await new Promise((r) => setTimeout(r, 50));
  finish.resolve();
  await stopped;
  const posted = state.posted.flatMap((p) => p.results.map((r) => r.run_id));
  assert.deepEqual(posted, ["late"]);
});

Deno.test("during an outage the probes it was given go on running on their grid, posted once back", async () => {
  const claim = crypto.randomUUID();
  const key = "42";
  const intervalMs = 1000;
  const offset = offsetOf(key, intervalMs);
  const first = gridAfter(Date.now(), offset, intervalMs);
  const claimed = (due: number): ClaimedRun => ({
    ...run(`${claim}.${key}.${due}.0`),
    due_at: new Date(due).toISOString(),
    interval_seconds: 1,
  });
  const { client, state } = fakeService([claimed(first)]);
  const targets: number[] = [];
  const runner = createRemoteRunner({
    client,
    execute: () => {
      targets.push(Date.now());
      return upRun();
    },
    ...SETTINGS,
    offlineTickMs: 50,
  });
  runner.start();
  await until(() => runner.counters().recorded === 1);
  state.link = "down";
  // Three more slots pass with the service out of reach.
  await new Promise((r) => setTimeout(r, 3.3 * intervalMs));
  const during = runner.counters();
  assert.ok(during.offline >= 3, `offline runs: ${during.offline}`);
  assert.equal(during.buffered, during.offline);
  // Back: the service offers a slot the runner already ran meanwhile; it is not run again.
  state.more = [claimed(first + intervalMs)];
  state.link = "up";
  await until(() => state.more.length === 0);
  await new Promise((r) => setTimeout(r, 200));
  await until(() => runner.counters().buffered === 0);
  await runner.stop(1000);
  const ids = state.posted.flatMap((p) => p.results.map((r) => r.run_id));
  const offline = ids.filter((id) => id.endsWith(".o"));
  assert.equal(new Set(ids).size, ids.length, "each result posted once");
  assert.ok(offline.length >= 3);
  const dues = offline.map((id) => Number(id.split(".")[2]));
  // On the probe's grid, one interval apart, from the slot after the last claimed one.
  dues.forEach((due, i) => assert.equal(due, first + (i + 1) * intervalMs));
  assert.ok(offline.every((id) => id.startsWith(`${claim}.${key}.`) && id.endsWith(".0.o")));
  // The target saw the claimed run and the outage's runs, and not the slot offered again.
  assert.ok(!ids.includes(`${claim}.${key}.${first + intervalMs}.0`), "run again");
  assert.equal(targets.length, 1 + runner.counters().offline);
});

Deno.test("the log says which service and location it serves and how many probes it was given", async () => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("info", (line) => lines.push(JSON.parse(line)));
  const claim = crypto.randomUUID();
  const due = Date.now() + 60_000;
  const { client, state } = fakeService([]);
  const asked: (number | undefined)[] = [];
  const runner = createRemoteRunner({
    client: {
      ...client,
      claim: (input, signal) => (asked.push(input.wait_seconds), client.claim(input, signal)),
    },
    execute: upRun,
    ...SETTINGS,
    log,
    serviceUrl: "https://probes.example.com",
  });
  runner.start();
  await until(() => lines.some((l) => l.msg === "serving location"));
  // No run was due at the first claim: the line comes at once all the same, saying none.
  assert.deepEqual(lines.find((l) => l.msg === "serving location"), {
    ...lines.find((l) => l.msg === "serving location"),
    service: "https://probes.example.com",
    location: "eu",
    probes: 0,
  });
  assert.equal(asked[0], 0, "the first claim does not wait");
  // Then two probes' runs (one of them twice): said once, with the probes.
  state.more = [`${claim}.1.${due}.0`, `${claim}.2.${due}.0`, `${claim}.2.${due + 1}.0`].map(
    (id) => ({ ...run(id), due_at: new Date(due).toISOString() }),
  );
  await until(() => lines.some((l) => l.msg === "first runs claimed"));
  state.more = [{ ...run(`${claim}.3.${due}.0`), due_at: new Date(due).toISOString() }];
  await until(() => state.more.length === 0);
  await runner.stop(100);
  const said = lines.filter((l) => l.msg === "serving location" || l.msg === "first runs claimed");
  assert.deepEqual(said.map((l) => [l.msg, l.location, l.probes]), [
    ["serving location", "eu", 0],
    ["first runs claimed", "eu", 2],
  ]);
  assert.equal(asked.filter((w) => w === 0).length, 1, "later claims wait as usual");
});
