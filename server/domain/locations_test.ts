import assert from "node:assert/strict";
import { sql } from "kysely";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";
import { runDueProbesOnce } from "../testing/runs.ts";
import { startTarget } from "../testing/target_server.ts";
import { tokenDigest } from "./locations.ts";
import type { Db } from "../storage/database.ts";
import { syncSchedules } from "../runner/store.ts";

async function location(api: TestClient, label?: string) {
  const name = uniqueName("loc");
  const res = await api.post("/api/v1/locations", { name, ...(label && { label }) });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { name, token: res.body.data.token as string };
}

async function project(api: TestClient, extra: Record<string, unknown> = {}) {
  const name = uniqueName();
  const res = await api.post("/api/v1/projects", { project: name, ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return name;
}

/**
 * The locations a probe has schedule rows at, '' for the built-in one, once a runner has added
 * the missing ones.
 */
async function scheduled(db: Db, project: string, probeId: string): Promise<string[]> {
  await syncSchedules(db, { now: Date.now(), intervalMs: 86_400_000 });
  const { rows } = await sql<{ location: string }>`
    select s.location from probe_schedule s join probes p on p.key = s.probe_key
    where p.project = ${project} and p.probe_id = ${probeId} order by s.location`.execute(db);
  return rows.map((r) => r.location);
}

apiSuite("locations", (test) => {
  test("the built-in location is listed first, and cannot be changed", async ({ api }) => {
    const res = await api.get("/api/v1/locations");
    assert.equal(res.status, 200);
    const { probes, runners, checks_per_minute, lag_seconds, ...local } = res.body.data[0];
    assert.deepEqual(local, {
      name: "local",
      label: null,
      kind: "local",
      created_at: null,
      updated_at: null,
      last_seen_at: null,
      version: null,
    });
    for (const n of [probes, runners, checks_per_minute, lag_seconds]) {
      assert.equal(typeof n, "number");
    }
    assert.equal(res.body.meta.count, res.body.data.length);
    assert.equal((await api.get("/api/v1/locations/local")).body.data.kind, "local");
    for (
      const res of [
        await api.patch("/api/v1/locations/local", { label: "here" }),
        await api.post("/api/v1/locations/local/token"),
        await api.delete("/api/v1/locations/local"),
        await api.post("/api/v1/locations", { name: "local" }),
      ]
    ) {
      assert.equal(res.status, 409, JSON.stringify(res.body));
      assert.equal(res.body.error.code, "conflict");
    }
  });

  test("a remote location: made with a token shown once, stored as its digest", async ({ api, app }) => {
    const { name, token } = await location(api, "Office");
    assert.match(token, /^plt_[A-Za-z0-9_-]{43}$/);
    const read = await api.get(`/api/v1/locations/${name}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.data.kind, "remote");
    assert.equal(read.body.data.label, "Office");
    assert.equal(read.body.data.probes, 0);
    assert.equal("token" in read.body.data, false);
    const listed = (await api.get("/api/v1/locations")).body.data;
    assert.ok(listed.some((l: { name: string }) => l.name === name));
    assert.ok(!JSON.stringify(listed).includes(token));
    const stored = await app.database.db.selectFrom("locations").select("token_sha256")
      .where("name", "=", name).executeTakeFirstOrThrow();
    assert.equal(stored.token_sha256, tokenDigest(token));

    assert.equal((await api.post("/api/v1/locations", { name })).status, 409);
    const patched = await api.patch(`/api/v1/locations/${name}`, { label: "HQ" });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.data.label, "HQ");
    assert.equal((await api.patch(`/api/v1/locations/${name}`, {})).status, 422);
    assert.equal((await api.get("/api/v1/locations/nowhere")).status, 404);
    assert.equal((await api.patch("/api/v1/locations/nowhere", { label: "x" })).status, 404);
    assert.equal((await api.post("/api/v1/locations/nowhere/token")).status, 404);
    assert.equal((await api.delete("/api/v1/locations/nowhere")).status, 404);
  });

  test("bad names and bodies are refused with 422", async ({ api }) => {
    for (
      const body of [
        { name: "" },
        { name: "-eu" },
        { name: "eu west" },
        { name: "x".repeat(65) },
        { name: "eu", extra: 1 },
        { name: "eu", label: "" },
        {},
      ]
    ) {
      const res = await api.post("/api/v1/locations", body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.code, "validation_failed");
    }
    const { name } = await location(api);
    assert.equal((await api.post(`/api/v1/locations/${name}/token`, { x: 1 })).status, 422);
  });

  test("rotating answers a new token and replaces the stored digest", async ({ api, app }) => {
    const { name, token } = await location(api);
    const res = await api.post(`/api/v1/locations/${name}/token`);
    assert.equal(res.status, 200);
    const rotated = res.body.data.token as string;
    assert.notEqual(rotated, token);
    const stored = await app.database.db.selectFrom("locations").select("token_sha256")
      .where("name", "=", name).executeTakeFirstOrThrow();
    assert.equal(stored.token_sha256, tokenDigest(rotated));
  });

  test("probes choose their locations; unknown names and too many are 422", async ({ api, app }) => {
    const eu = await location(api);
    const p = await project(api);
    const created = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://example.com/a",
      locations: ["local", eu.name],
    });
    assert.equal(created.status, 201);
    const probeId = created.body.data.probe_id;
    const read = (await api.get(`/api/v1/projects/${p}/probes/${probeId}`)).body.data;
    assert.deepEqual(read.locations, ["local", eu.name]);
    assert.deepEqual(read.effective_locations, ["local", eu.name]);
    assert.deepEqual(await scheduled(app.database.db, p, probeId), ["", eu.name]);

    const unknown = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://example.com/b",
      locations: ["local", "mars"],
    });
    assert.equal(unknown.status, 422);
    assert.deepEqual(unknown.body.error.details.map((d: { path: string }) => d.path), [
      "locations.1",
    ]);
    assert.match(unknown.body.error.details[0].message, /mars/);
    for (
      const locations of [
        [],
        ["local", "local"],
        Array.from({ length: 17 }, (_, i) => `l${i}`),
        "local",
        [""],
      ]
    ) {
      const res = await api.post(`/api/v1/projects/${p}/probes`, {
        url: "https://example.com/c",
        locations,
      });
      assert.equal(res.status, 422, JSON.stringify(locations));
    }
    const patchUnknown = await api.patch(`/api/v1/projects/${p}/probes/${probeId}`, {
      locations: ["nowhere"],
    });
    assert.equal(patchUnknown.status, 422);
    assert.equal(patchUnknown.body.error.details[0].path, "locations.0");

    // A PATCH of its locations keeps its probe_id and moves its schedule rows.
    const patched = await api.patch(`/api/v1/projects/${p}/probes/${probeId}`, {
      locations: [eu.name],
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.data.probe_id, probeId);
    assert.deepEqual(await scheduled(app.database.db, p, probeId), [eu.name]);
    // null: back to the project's default, the built-in location.
    await api.patch(`/api/v1/projects/${p}/probes/${probeId}`, { locations: null });
    const back = (await api.get(`/api/v1/projects/${p}/probes/${probeId}`)).body.data;
    assert.equal(back.locations, null);
    assert.deepEqual(back.effective_locations, ["local"]);
    assert.deepEqual(await scheduled(app.database.db, p, probeId), [""]);

    // A rewrite without `locations` takes the default again.
    await api.patch(`/api/v1/projects/${p}/probes/${probeId}`, { locations: [eu.name] });
    await api.post(`/api/v1/projects/${p}/probes`, { url: "https://example.com/a" });
    assert.deepEqual(await scheduled(app.database.db, p, probeId), [""]);
  });

  test("a project's default_locations: for its probes without their own", async ({ api, app }) => {
    const eu = await location(api);
    assert.equal(
      (await api.post("/api/v1/projects", {
        project: uniqueName(),
        default_locations: ["mars"],
      })).status,
      422,
    );
    const p = await project(api, { default_locations: [eu.name] });
    assert.deepEqual((await api.get(`/api/v1/projects/${p}`)).body.data.default_locations, [
      eu.name,
    ]);
    const own = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://example.com/own",
      locations: ["local"],
    });
    const follows = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://example.com/follows",
    });
    const followsId = follows.body.data.probe_id;
    const read = (await api.get(`/api/v1/projects/${p}/probes/${followsId}`)).body.data;
    assert.deepEqual(read.effective_locations, [eu.name]);
    assert.equal((await api.get(`/api/v1/locations/${eu.name}`)).body.data.probes, 1);

    const patched = await api.patch(`/api/v1/projects/${p}`, {
      default_locations: ["local", eu.name],
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(await scheduled(app.database.db, p, followsId), ["", eu.name]);
    assert.deepEqual(await scheduled(app.database.db, p, own.body.data.probe_id), [""]);
    assert.equal(
      (await api.patch(`/api/v1/projects/${p}`, {
        default_locations: ["mars"],
      })).status,
      422,
    );
  });

  test("a location in use is not deleted; once unused it is, with its schedules", async ({ api, app }) => {
    const eu = await location(api);
    const p = await project(api);
    const created = await api.post(`/api/v1/projects/${p}/probes`, {
      url: "https://example.com/in-use",
      locations: [eu.name],
    });
    const probeId = created.body.data.probe_id;
    const refused = await api.delete(`/api/v1/locations/${eu.name}`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.error.message, /in use by 1 probe/);
    await api.patch(`/api/v1/projects/${p}/probes/${probeId}`, { locations: ["local"] });
    const p2 = await project(api, { default_locations: [eu.name] });
    assert.equal((await api.delete(`/api/v1/locations/${eu.name}`)).status, 409);
    await api.patch(`/api/v1/projects/${p2}`, { default_locations: null });
    assert.equal((await api.delete(`/api/v1/locations/${eu.name}`)).status, 204);
    assert.equal((await api.get(`/api/v1/locations/${eu.name}`)).status, 404);
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from probe_schedule where location = ${eu.name}`
      .execute(app.database.db);
    assert.equal(Number(rows[0].n), 0);
  });

  test("the built-in runner runs only its own location's schedules", async ({ api, app }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const p = await project(api);
      const both = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `${target.origin}/ok?both`,
        locations: ["local", eu.name],
      });
      const remoteOnly = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `${target.origin}/ok?remote`,
        locations: [eu.name],
      });
      await runDueProbesOnce(app.database.db);
      const results = (id: string, query = "") =>
        api.get(`/api/v1/projects/${p}/probes/${id}/results${query}`);
      const bothId = both.body.data.probe_id;
      const all = (await results(bothId)).body.data;
      assert.equal(all.length, 1);
      assert.equal(all[0].location, "local");
      assert.equal((await results(bothId, "?location=local")).body.data.length, 1);
      assert.equal((await results(bothId, `?location=${eu.name}`)).body.data.length, 0);
      assert.equal((await results(remoteOnly.body.data.probe_id)).body.data.length, 0);
      // The remote location's rows are due and untouched: no runner of its has claimed them.
      const { rows } = await sql<{ leased_by: string | null; last_run_at: Date | null }>`
        select leased_by, last_run_at from probe_schedule where location = ${eu.name}`
        .execute(app.database.db);
      assert.equal(rows.length, 2);
      assert.ok(rows.every((r) => r.leased_by === null && r.last_run_at === null));

      const stats = (query: string) =>
        api.get(`/api/v1/projects/${p}/probes/${bothId}/stats${query}`);
      assert.equal((await stats("")).body.data.runs, 1);
      assert.equal((await stats("?location=local")).body.data.runs, 1);
      const euStats = (await stats(`?location=${eu.name}`)).body.data;
      assert.equal(euStats.runs, 0);
      assert.equal(euStats.last_run_at, null);
      const series = await api.get(
        `/api/v1/projects/${p}/probes/${bothId}/series?location=${eu.name}`,
      );
      assert.equal(series.status, 200);
      assert.equal(
        series.body.data.buckets.reduce((n: number, b: { runs: number }) => n + b.runs, 0),
        0,
      );
      assert.equal((await stats("?location=-bad")).status, 422);
    } finally {
      await target.close();
    }
  });

  test("run-now runs from the built-in location only", async ({ api }) => {
    const target = await startTarget();
    try {
      const eu = await location(api);
      const p = await project(api);
      const here = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `${target.origin}/ok?here`,
      });
      const ran = await api.post(`/api/v1/projects/${p}/probes/${here.body.data.probe_id}/run`);
      assert.equal(ran.status, 200);
      assert.equal(ran.body.data.location, "local");
      const away = await api.post(`/api/v1/projects/${p}/probes`, {
        url: `${target.origin}/ok?away`,
        locations: [eu.name],
      });
      const refused = await api.post(`/api/v1/projects/${p}/probes/${away.body.data.probe_id}/run`);
      assert.equal(refused.status, 409);
      assert.match(refused.body.error.message, /built-in location/);
    } finally {
      await target.close();
    }
  });
});
