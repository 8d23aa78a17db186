// Concurrent writers on the probes of one project: creates (create-or-rewrite), PATCHes that
// move a probe to another URL or method (and so another probe_id) and deletes, all at once,
// round after round. Each answer must be one the API documents for its operation, and what is
// left must be one probe per URL, each reachable under the id its method and URL give.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type Answer, apiSuite, type TestClient, uniqueName } from "../server/testing/app.ts";
import { probeIdOf } from "../server/domain/probe_id.ts";

const ROUNDS = 20;
const WRITERS = 25;
const URLS = ["http://race.test/a", "http://race.test/b", "http://race.test/c"];
const METHODS = ["GET", "POST", "HEAD"] as const;

/** The answers docs/api.md gives each write (besides 401 and 503, which these cannot meet). */
const DOCUMENTED: Record<string, number[]> = {
  create: [200, 201, 404, 422],
  patch: [200, 404, 422],
  delete: [204, 404],
};

const pick = <T>(items: readonly T[], i: number): T => items[i % items.length];

/** Writer `i` of a round: mostly creates of a few URLs, PATCHes and deletes by computed ids. */
function writer(api: TestClient, project: string, round: number, i: number) {
  const url = pick(URLS, i + round);
  const method = pick(METHODS, i * 7 + round);
  const id = probeIdOf(pick(METHODS, i + round * 3), pick(URLS, i * 5 + round));
  const base = `/api/v1/projects/${project}/probes`;
  switch ((i + round) % 5) {
    case 0:
    case 1:
      return ["create", api.post(base, { url, method, latency: i + 1 })] as const;
    case 2:
      return ["patch", api.patch(`${base}/${id}`, { url, method })] as const;
    case 3:
      return ["patch", api.patch(`${base}/${id}`, { method })] as const;
    default:
      return ["delete", api.delete(`${base}/${id}`)] as const;
  }
}

async function remaining(api: TestClient, project: string) {
  const list = await api.get(`/api/v1/projects/${project}/probes`);
  assert.equal(list.status, 200, list.text);
  return list.body.data as { url: string; method: string; probe_id: string }[];
}

apiSuite("probes under concurrent writers", (test) => {
  test("creates of one URL let go at the same instant: one 201, the others 200 (PostgreSQL)", async ({ api, app, backend }) => {
    // PGlite runs one statement at a time: writers never meet there.
    if (backend !== "postgres") return;
    const project = uniqueName("race");
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const db = app.database.db;
    for (let round = 0; round < 10; round++) {
      const url = `http://race.test/lockstep/${round}`;
      const [writes] = await db.transaction().execute(async (trx) => {
        // SHARE conflicts with the inserts' ROW EXCLUSIVE only: each create reads, then waits
        // at its INSERT (or for the one ahead of it); committing lets them all go at once.
        await sql`lock table probes in share mode`.execute(trx);
        const writes = Promise.all(
          Array.from({ length: 3 }, () => api.post(`/api/v1/projects/${project}/probes`, { url })),
        );
        for (let waiting = 0; waiting < 3;) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          const row = await sql<{ n: number }>`select count(*)::int as n from pg_locks
            where not granted and database =
              (select oid from pg_database where datname = current_database())`.execute(db);
          waiting = row.rows[0].n;
        }
        return [writes]; // not awaited here: they wait for this transaction to end
      });
      const answers = await writes;
      assert.deepEqual(
        answers.map((a) => a.status).toSorted(),
        [200, 200, 201],
        `round ${round}: ${answers.map((a) => a.text)}`,
      );
    }
  });

  test("25 simultaneous creates of one URL, 20 rounds: one 201, 24 × 200, one probe", async ({ api }) => {
    const project = uniqueName("race");
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    for (let round = 0; round < ROUNDS; round++) {
      const url = `http://race.test/one/${round}`;
      const answers = await Promise.all(
        Array.from(
          { length: WRITERS },
          (_, i) => api.post(`/api/v1/projects/${project}/probes`, { url, latency: i + 1 }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      assert.deepEqual(
        statuses.toSorted(),
        [...Array(WRITERS - 1).fill(200), 201],
        `round ${round}: ${answers.filter((a) => a.status >= 300).map((a) => a.text)}`,
      );
      const probes = (await remaining(api, project)).filter((p) => p.url === url);
      assert.equal(probes.length, 1, `round ${round}`);
    }
  });

  test("mixed creates, PATCHes of URL and method, and deletes: only documented answers, one probe per URL", async ({ api }) => {
    const project = uniqueName("race");
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const unexpected: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const writes = Array.from({ length: WRITERS }, (_, i) => writer(api, project, round, i));
      const answers: Answer[] = await Promise.all(writes.map(([, answer]) => answer));
      answers.forEach((answer, i) => {
        const kind = writes[i][0];
        if (!DOCUMENTED[kind].includes(answer.status)) {
          unexpected.push(`round ${round} ${kind}: ${answer.status} ${answer.text}`);
        } else if (answer.status === 422) {
          // The one 422 a race may bring: a PATCH onto a URL another probe took meanwhile.
          assert.equal(
            answer.body.error.details?.[0]?.message,
            "another probe of this project already has this URL",
            answer.text,
          );
        }
      });
      const probes = await remaining(api, project);
      const urls = probes.map((p) => p.url);
      assert.equal(new Set(urls).size, urls.length, `round ${round}: ${urls}`);
      for (const p of probes) {
        assert.equal(p.probe_id, probeIdOf(p.method, p.url), `round ${round}`);
        const got = await api.get(`/api/v1/projects/${project}/probes/${p.probe_id}`);
        assert.equal(got.status, 200, got.text);
      }
    }
    assert.deepEqual(unexpected, []);
  });
});
