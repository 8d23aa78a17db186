import assert from "node:assert/strict";
import { sql } from "kysely";
import { apiSuite, type TestClient, type TestContext } from "../testing/app.ts";
import { claimAs, makeLocation, postAs, probeOnlyAt, resultOf } from "../testing/remote_runs.ts";
import { gridAfter, offsetOf } from "../domain/schedule.ts";

const r1 = { runner: "r1", version: "test-1" };
const r2 = { runner: "r2", version: "test-1" };

/** The one run a claim of `who` answers (each location here runs one probe). */
async function claimOne(api: TestClient, token: string, who: typeof r1) {
  const res = await claimAs(api, token, who);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.data.runs.length, 1, res.text);
  return res.body.data.runs[0] as { run_id: string; due_at: string; interval_seconds: number };
}

/**
 * A location running one probe made a day ago, which r2 ran last (its run recorded): then the
 * probe's schedule is put at slot `held`, its latest grid point, due now and claimed by nobody.
 * `outage(due)` names a run r2 made at `due` while it could not reach the service.
 */
async function probeRunBy2({ api, app }: TestContext) {
  const eu = await makeLocation(api);
  const { project } = await probeOnlyAt(api, eu.name);
  const db = app.database.db;
  await sql`update probes set created_at = now() - interval '1 day' where project = ${project}`
    .execute(db);
  const first = await claimOne(api, eu.token, r2);
  assert.equal((await postAs(api, eu.token, [resultOf(first.run_id)], r2)).body.data.recorded, 1);
  const [claim, key] = first.run_id.split(".");
  const interval = first.interval_seconds * 1000;
  const held = gridAfter(Date.now() - interval, offsetOf(key, interval), interval);
  await sql`update probe_schedule set next_due_at = ${new Date(held)}
    where location = ${eu.name}`.execute(db);
  const slots = async () => {
    const { rows } = await sql<{ due: string; runner: string }>`
      select (extract(epoch from due_at) * 1000)::bigint::text as due, runner from probe_results
      where location = ${eu.name} order by due_at`.execute(db);
    return rows.map((r) => [Number(r.due), r.runner.split("#")[0]]);
  };
  const row = async () => {
    const { rows: [r] } = await sql<{ next_due_at: Date; leased_by: string | null }>`
      select next_due_at, leased_by from probe_schedule where location = ${eu.name}`.execute(db);
    return { next: new Date(r.next_due_at).getTime(), by: r.leased_by?.split("#")[0] ?? null };
  };
  return {
    ...eu,
    first: Date.parse(first.due_at),
    held,
    interval,
    outage: (due: number) => `${claim}.${key}.${due}.0.o`,
    slots,
    row,
    /** Lets the lease on the probe run out. */
    lapse: () =>
      sql`update probe_schedule set lease_until = now() - interval '1 second'
        where location = ${eu.name}`.execute(db),
  };
}

const statuses = (res: { body: { data: { results: { status: string }[] } } }) =>
  res.body.data.results.map((r) => r.status);

apiSuite("runs made during an outage, beside a live lease", (test) => {
  test("an outage run posted before, during or after another runner's lease never takes its run", async (t) => {
    const { api } = t;
    const p = await probeRunBy2(t);
    const { held, interval, outage } = p;
    // Before r1's claim: a slot behind the schedule is filled; the schedule stays where it was.
    const before = await postAs(api, p.token, [resultOf(outage(held - 2 * interval))], r2);
    assert.deepEqual(statuses(before), ["recorded"]);
    assert.deepEqual(await p.row(), { next: held, by: null });
    // During r1's lease: the slot it holds is its own; a slot behind it is still filled.
    const run = await claimOne(api, p.token, r1);
    assert.equal(Date.parse(run.due_at), held);
    const during = await postAs(api, p.token, [
      resultOf(outage(held - interval)),
      resultOf(outage(held)),
    ], r2);
    assert.deepEqual(statuses(during), ["recorded", "expired"]);
    assert.deepEqual(await p.row(), { next: held, by: "r1" });
    // The live runner's result is recorded, whatever r2 posted.
    const live = await postAs(api, p.token, [resultOf(run.run_id)], r1);
    assert.deepEqual(statuses(live), ["recorded"]);
    // After it: the slot is recorded; posted again it is a duplicate.
    const after = await postAs(api, p.token, [resultOf(outage(held))], r2);
    assert.deepEqual(statuses(after), ["duplicate"]);
    assert.deepEqual(
      await p.slots(),
      [
        [held - 2 * interval, "r2"],
        [held - interval, "r2"],
        [held, "r1"],
        [p.first, "r2"],
      ].sort((a, b) => (a[0] as number) - (b[0] as number)),
    );
    assert.deepEqual(await p.row(), { next: held + interval, by: null });
  });

  test("an outage run takes its own runner's claim of that slot, and a lease that ran out", async (t) => {
    const { api } = t;
    const p = await probeRunBy2(t);
    const { held, interval, outage } = p;
    const at = (due: number) =>
      sql`update probe_schedule set next_due_at = ${new Date(due)} where location = ${p.name}`
        .execute(t.app.database.db);
    // r2 is back and claims a slot; one behind it, run during the outage, leaves its claim
    // alone: r2's result for the claimed run is recorded.
    await at(held - 2 * interval);
    const run = await claimOne(api, p.token, r2);
    const behind = await postAs(api, p.token, [resultOf(outage(held - 3 * interval))], r2);
    assert.deepEqual(statuses(behind), ["recorded"]);
    assert.deepEqual(await p.row(), { next: held - 2 * interval, by: "r2" });
    const claimed = await postAs(api, p.token, [resultOf(run.run_id)], r2);
    assert.deepEqual(statuses(claimed), ["recorded"]);
    // r2 claims a slot it ran during the outage (it does not run it twice): its outage run is
    // the claim's result.
    await at(held - interval);
    assert.equal(Date.parse((await claimOne(api, p.token, r2)).due_at), held - interval);
    const own = await postAs(api, p.token, [resultOf(outage(held - interval))], r2);
    assert.deepEqual(statuses(own), ["recorded"]);
    // r1's lease runs out: r2's run of that slot takes it over, and r1's late result is
    // expired, as when another runner's claim takes a run over.
    await at(held);
    const late = await claimOne(api, p.token, r1);
    await p.lapse();
    const taken = await postAs(api, p.token, [resultOf(outage(held))], r2);
    assert.deepEqual(statuses(taken), ["recorded"]);
    const expired = await postAs(api, p.token, [resultOf(late.run_id)], r1);
    assert.deepEqual(statuses(expired), ["expired"]);
    assert.deepEqual((await p.slots()).map(([, runner]) => runner), [
      "r2",
      "r2",
      "r2",
      "r2",
      "r2",
    ]);
  });
});
