/**
 * A location token's claims, bounded (`claim_waits.ts`): at most `CLAIMS_PER_LOCATION` open at
 * once, past them 429 with `Retry-After` at once; and a location counts the runners the service
 * handed runs, not names a token makes up. Through the real handler, on both databases. That
 * waiting claims cost the database one poll, not a claim each, takes seconds of real waiting: it
 * is in the end-to-end tier (`e2e/claim_waits_test.ts`).
 */
import assert from "node:assert/strict";
import { apiSuite, uniqueName } from "../testing/app.ts";
import { CLAIM_RETRY_AFTER_SECONDS, CLAIMS_PER_LOCATION } from "./claim_waits.ts";
import { claim, location, waitingClaims, WHO } from "../testing/claims.ts";

apiSuite("a location's claims, bounded", (test) => {
  test("past its open claims a location's claim is answered 429 at once, with Retry-After", async ({ api }) => {
    const eu = await location(api);
    const other = await location(api);
    // They wait 5 s, for the checks below to be made meanwhile: 2 s was too short once for a
    // starved process (four test files at once at load 20).
    const { claims, answered } = waitingClaims(api, eu.token, CLAIMS_PER_LOCATION, 5);
    // Claims that do not wait come and go until the waiting ones fill the bound.
    let refused;
    while (answered.length === 0) {
      const res = await claim(api, eu.token, { runner: "extra" });
      if (res.status === 429) {
        refused = res;
        break;
      }
      assert.equal(res.status, 200, res.text);
      // Timers too get their turn (the embedded database answers without one).
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(refused, "a claim past the bound was refused while the others waited");
    assert.equal(refused.body.error.code, "rate_limited");
    assert.match(refused.body.error.message, new RegExp(`${CLAIMS_PER_LOCATION} claims open`));
    assert.equal(refused.headers.get("retry-after"), String(CLAIM_RETRY_AFTER_SECONDS));
    // The same on /trpc; another location is not held back.
    const trpc = await api.post("/trpc/runner.claim", { ...WHO, wait_seconds: 0 }, {
      key: eu.token,
    });
    assert.equal(trpc.status, 429, trpc.text);
    assert.equal(trpc.body.error.data.error.code, "rate_limited");
    assert.equal(trpc.headers.get("retry-after"), String(CLAIM_RETRY_AFTER_SECONDS));
    const batch = await api.post("/trpc/runner.claim?batch=1", { 0: { ...WHO, wait_seconds: 0 } }, {
      key: eu.token,
    });
    assert.equal(batch.body[0].error.data.error.code, "rate_limited", batch.text);
    assert.equal(batch.headers.get("retry-after"), String(CLAIM_RETRY_AFTER_SECONDS));
    assert.equal((await claim(api, other.token)).status, 200);
    assert.deepEqual(answered, [], "all answered while the bound's claims still waited");

    for (const res of await Promise.all(claims)) {
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data.runs, []);
    }
    // Answered, they leave room for new ones.
    assert.equal((await claim(api, eu.token)).status, 200);
  });

  test("a location counts the runners it handed runs to, not the names its token sends", async ({ api }) => {
    const eu = await location(api);
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const made = await api.post(`/api/v1/projects/${project}/probes`, {
      url: `https://example.com/${uniqueName("p")}`,
      locations: [eu.name],
    });
    assert.equal(made.status, 201, made.text);
    const handed = await claim(api, eu.token, { runner: "real" });
    assert.equal(handed.body.data.runs.length, 1, handed.text);
    for (let i = 0; i < 20; i++) {
      const res = await claim(api, eu.token, { runner: `made-up-${i}`, version: "evil-1" });
      assert.deepEqual(res.body.data.runs, [], "nothing more is due");
    }
    const read = (await api.get(`/api/v1/locations/${eu.name}`)).body.data;
    assert.equal(read.runners, 1, "only the runner handed a run counts");
    assert.equal(read.version, "test-1", "names that only ask leave no trace");
    const metrics = (await api.get("/metrics")).text;
    assert.match(
      metrics,
      new RegExp(`^location_runners\\{location="${eu.name}",kind="remote"\\} 1$`, "m"),
    );
    // A runner handed runs once goes on counting while it asks, and is seen with its version.
    const again = await claim(api, eu.token, { runner: "real", version: "test-2" });
    assert.equal(again.status, 200);
    const later = (await api.get(`/api/v1/locations/${eu.name}`)).body.data;
    assert.equal(later.runners, 1);
    assert.equal(later.version, "test-2");
  });
});
