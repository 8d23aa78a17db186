/**
 * Waiting claims of a location token (`server/runner/claim_waits.ts`) cost the database one poll,
 * not a claim each, and a run falling due wakes one of them. Through the real handler, on both
 * databases; in the end-to-end tier because the claims wait real seconds (the bounds on open
 * claims are in `server/runner/claim_waits_test.ts`).
 */
import assert from "node:assert/strict";
import type { KyselyPlugin } from "kysely";
import { createApp } from "../server/app.ts";
import { createLogger } from "../server/base/log.ts";
import {
  backends,
  freshDatabase,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../server/testing/app.ts";
import { CLAIMS_PER_LOCATION } from "../server/runner/claim_waits.ts";
import { location, waitingClaims } from "../server/testing/claims.ts";

for (const backend of backends()) {
  Deno.test(`waiting claims cost the database one poll, not a claim each [${backend}]`, async () => {
    // Every statement the app sends, counted (Kysely's plugin interface).
    let statements = 0;
    const counter: KyselyPlugin = {
      transformQuery: ({ node }) => (statements++, node),
      transformResult: ({ result }) => Promise.resolve(result),
    };
    const fresh = await freshDatabase(backend);
    const app = await createApp({
      database: { ...fresh, db: fresh.db.withPlugin(counter) },
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      iamAlive: { writeLine: () => {} },
    });
    try {
      const api = new TestClient(app.handler);
      const eu = await location(api);
      /** The statements `CLAIMS_PER_LOCATION` claims cost, waiting `seconds` for runs. */
      const cost = async (seconds: number) => {
        const before = statements;
        const { claims } = waitingClaims(api, eu.token, CLAIMS_PER_LOCATION, seconds);
        for (const res of await Promise.all(claims)) assert.equal(res.status, 200, res.text);
        return statements - before;
      };
      const answeredAtOnce = await cost(0);
      const waited = await cost(3);
      // Claiming again every second would be 3 claims more per claim (each 2+ statements).
      assert.ok(
        waited - answeredAtOnce < CLAIMS_PER_LOCATION,
        `${CLAIMS_PER_LOCATION} claims waiting 3 s cost ${waited - answeredAtOnce} statements`,
      );

      // A run falling due meanwhile (a probe made now: the poll adds its schedule row) wakes one
      // waiting claim, which takes it; the others answer empty at their time.
      const { claims } = waitingClaims(api, eu.token, 3, 6);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const project = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const made = await api.post(`/api/v1/projects/${project}/probes`, {
        url: "https://example.com/due",
        locations: [eu.name],
      });
      assert.equal(made.status, 201, made.text);
      const runs = (await Promise.all(claims)).map((res) => res.body.data.runs.length);
      assert.deepEqual(runs.sort(), [0, 0, 1]);
    } finally {
      await app.close();
    }
  });
}
