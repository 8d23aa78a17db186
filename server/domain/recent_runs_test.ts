/**
 * The overview's row of last runs (`recent_runs`, `last_duration_ms` of `GET /api/v1/overview`):
 * results as the runners store them, read back through the REST handler, on PGlite and, with
 * TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import type { Outcome } from "@probe/shared";
import { apiSuite, uniqueName } from "../testing/app.ts";
import { RECENT_RUNS } from "./recent_runs.ts";

const MINUTE = 60_000;

apiSuite("the overview's last runs", (test) => {
  test("each probe's last 20 runs of 24 hours, every location's, oldest first; maintenance apart; the newest's duration", async (t) => {
    const project = uniqueName("recent");
    assert.equal((await t.api.post("/api/v1/projects", { project })).status, 201);
    const ids: string[] = [];
    for (const url of ["https://a.example.test/", "https://b.example.test/"]) {
      const made = await t.api.post(`/api/v1/projects/${project}/probes`, { url });
      assert.equal(made.status, 201, made.text);
      ids.push(made.body.data.probe_id);
    }
    const db = t.app.database.db;
    const [busy] = await db.selectFrom("probes").select("key")
      .where("project", "=", project).where("probe_id", "=", ids[0]).execute();
    const now = Date.now();
    // 25 runs a minute apart, two locations taking turns; one more run older than 24 hours.
    const cycle: Outcome[] = ["up", "down", "degraded", "blocked", "up"];
    const rows = Array.from({ length: 25 }, (_, i) => ({
      at: now - (25 - i) * MINUTE,
      outcome: cycle[i % cycle.length],
      location: i % 2 ? "" : "office",
      maintenance: i === 22,
      ms: 100 + i,
    }));
    await db.insertInto("probe_results").values([
      {
        at: now - 25 * 60 * MINUTE,
        outcome: "down" as Outcome,
        location: "",
        maintenance: false,
        ms: 1,
      },
      ...rows,
    ].map((r) => ({
      probe_key: busy.key,
      due_at: new Date(r.at),
      started_at: new Date(r.at),
      duration_ms: r.ms,
      outcome: r.outcome,
      http_status: r.outcome === "blocked" ? null : 200,
      error: null,
      address: null,
      runner: "recent-runs-test",
      location: r.location,
      in_maintenance: r.maintenance,
    }))).execute();

    for (const path of ["/api/v1/overview", `/api/v1/overview?project=${project}`]) {
      const res = await t.api.get(path);
      assert.equal(res.status, 200, res.text);
      const probes = res.body.data.projects
        .find((p: { project: string }) => p.project === project).probes;
      const byId = new Map(probes.map((p: { probe_id: string }) => [p.probe_id, p]));
      const latest = rows.slice(-RECENT_RUNS);
      assert.deepEqual(
        (byId.get(ids[0]) as { recent_runs: string[] }).recent_runs,
        latest.map((r) => r.maintenance ? "maintenance" : r.outcome),
      );
      assert.equal((byId.get(ids[0]) as { last_duration_ms: number }).last_duration_ms, 124);
      // A probe without runs has an empty row and no duration.
      assert.deepEqual(byId.get(ids[1]), {
        ...(byId.get(ids[1]) as object),
        recent_runs: [],
        last_duration_ms: null,
      });
    }
  });
});
