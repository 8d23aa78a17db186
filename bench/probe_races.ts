/**
 * `deno run -A --config deno.dev.json bench/probe_races.ts`: concurrent writers on the probes of
 * one project, through the real handler on a fresh PostgreSQL database. Each round sends 25
 * writes at once: first 25 creates of one new URL, then 25 mixed creates, PATCHes (new URL or
 * method) and deletes. Prints, per kind of round, how many rounds had an answer the API does
 * not document (a 500 when two creates meet) and the count of such answers.
 *
 * Environment: RACE_ROUNDS (100), BENCH_DATABASE_URL (admin URL; default the local
 * 127.0.0.1:5432).
 */
import { probeIdOf } from "../server/domain/probe_id.ts";
import { createApp } from "../server/app.ts";
import { createLogger } from "../server/base/log.ts";
import { freshDatabase, TEST_API_KEY, TestClient } from "../server/testing/app.ts";
import { benchSettings, envNumber } from "./setup.ts";

const ROUNDS = envNumber("RACE_ROUNDS", 100);
const WRITERS = 25;
const URLS = ["http://race.test/a", "http://race.test/b", "http://race.test/c"];
const METHODS = ["GET", "POST", "HEAD"];
const DOCUMENTED = new Set([200, 201, 204, 404, 422]);

Deno.env.set("TEST_DATABASE_URL", benchSettings().adminUrl);
// Failures are logged (as the service logs them), so that an undocumented answer shows its cause.
const app = await createApp({
  database: await freshDatabase("postgres", { reuse: false }),
  apiKeys: [TEST_API_KEY],
  log: createLogger("error"),
});
const api = new TestClient(app.handler);
const base = "/api/v1/projects/race/probes";
const pick = <T>(items: T[], i: number) => items[i % items.length];

function mixed(round: number, i: number) {
  const id = probeIdOf(pick(METHODS, i + round * 3), pick(URLS, i * 5 + round));
  const url = pick(URLS, i + round);
  const method = pick(METHODS, i * 7 + round);
  switch ((i + round) % 5) {
    case 0:
    case 1:
      return api.post(base, { url, method });
    case 2:
      return api.patch(`${base}/${id}`, { url, method });
    case 3:
      return api.patch(`${base}/${id}`, { method });
    default:
      return api.delete(`${base}/${id}`);
  }
}

try {
  await api.post("/api/v1/projects", { project: "race" });
  for (const kind of ["creates of one URL", "mixed writers"]) {
    let rounds = 0, count = 0;
    const seen = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        Array.from(
          { length: WRITERS },
          (_, i) =>
            kind === "mixed writers"
              ? mixed(round, i)
              : api.post(base, { url: `http://race.test/one/${round}` }),
        ),
      );
      const bad = answers.filter((a) => !DOCUMENTED.has(a.status));
      if (bad.length > 0) rounds++;
      count += bad.length;
      for (const a of bad) seen.add(`${a.status} ${a.text}`);
    }
    console.log(
      `${kind}: ${rounds} of ${ROUNDS} rounds of ${WRITERS} had an undocumented answer ` +
        `(${count} answers in all)${[...seen].map((text) => `\n  ${text}`).join("")}`,
    );
  }
} finally {
  await app.close();
}
