import assert from "node:assert/strict";
import { LOOPBACK_ONLY } from "../testing/app.ts";
import { startTarget } from "../testing/target_server.ts";
import { executeProbe } from "./execute.ts";
import { probeUserAgent } from "./user_agent.ts";
import { SERVICE_VERSION } from "../base/version.ts";

Deno.test("probe requests name the service, its version and the location", async () => {
  const target = await startTarget();
  try {
    const probe = {
      url: `${target.origin}/ok`,
      method: "GET",
      headers: {},
      body: null,
      latency: null,
      expect: null,
    };
    const userAgent = probeUserAgent("office");
    assert.equal(userAgent, `probe-service/${SERVICE_VERSION} (location=office)`);
    await executeProbe(probe, { policy: LOOPBACK_ONLY, timeoutMs: 5000, userAgent });
    assert.equal(target.hits[0].headers["user-agent"], userAgent);
    // A probe's own User-Agent is sent instead.
    await executeProbe({ ...probe, headers: { "User-Agent": "mine/1" } }, {
      policy: LOOPBACK_ONLY,
      timeoutMs: 5000,
      userAgent,
    });
    assert.equal(target.hits[1].headers["user-agent"], "mine/1");
  } finally {
    await target.close();
  }
});
