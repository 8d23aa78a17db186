import assert from "node:assert/strict";
import { iamAliveRunnerFigures } from "@probe/shared";
import { migrateToLatest } from "../db/migrator.ts";
import { freshDatabase } from "../testing/app.ts";
import { createNetworkPolicy, parseNetworks } from "../outbound/network_policy.ts";
import { outboundCheck, reportRunnerFigures } from "./runner_figures.ts";

Deno.test("the webhook's outbound check is the probes' network policy", async () => {
  const resolve = (host: string) =>
    Promise.resolve(host === "hooks.example" ? ["93.184.216.34"] : ["169.254.169.254"]);
  const check = outboundCheck(createNetworkPolicy(), resolve);
  assert.deepEqual(await check(new URL("https://hooks.example/x")), { allowed: true });
  assert.deepEqual(await check(new URL("http://metadata.example/")), {
    allowed: false,
    reason: "blocked: 169.254.169.254 is link-local",
  });
  assert.equal((await check(new URL("http://127.0.0.1:9/"))).allowed, false);
  const open = outboundCheck(createNetworkPolicy(parseNetworks("127.0.0.0/8")), resolve);
  assert.equal((await open(new URL("http://127.0.0.1:9/"))).allowed, true);
});

Deno.test("runner figures fit the I'm alive report's shape", async () => {
  const handle = await freshDatabase("pglite");
  try {
    await migrateToLatest(handle.db);
    const figures = await reportRunnerFigures(handle.db)(new Date(Date.now() - 3_600_000));
    assert.equal(iamAliveRunnerFigures.safeParse(figures).success, true);
    assert.equal(figures.runs, 0);
    assert.equal(figures.failures, 0);
  } finally {
    await handle.close();
  }
});
