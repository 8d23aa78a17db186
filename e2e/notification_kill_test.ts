/**
 * Delivery that loses nothing, with real processes: a server whose webhook target
 * hangs is killed (SIGKILL) while a notification is in flight, between its claim and the end of
 * its send. A new server on the same database (the same DATA_DIR for the embedded one, the same
 * PostgreSQL database) takes the notification over once the claim's lease
 * (`NOTIFICATION_LEASE_MS`, short here) has run out, and sends it with the same `webhook-id`; the
 * outbox then shows it delivered, after two attempts.
 */
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { createPostgresDatabase } from "../server/testing/app.ts";
import {
  isListeningLine,
  restCall,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import { startTarget } from "../server/testing/target_server.ts";

const KEY = "kill-e2e-key-0123456789";
/**
 * Longer than the first server's claim takes to reach the receiver on a slow, busy machine: a
 * lease that runs out before the kill lets the first server claim it a second time (2 s did,
 * at a JS calibration of ~400 ms: three attempts).
 */
const LEASE_MS = 6000;

/** The environment a fresh clone would have, plus the given variables. */
function env(vars: Record<string, string>): Record<string, string> {
  const keep = ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"];
  const base = Object.fromEntries(
    keep.flatMap((k) => Deno.env.get(k) !== undefined ? [[k, Deno.env.get(k)!]] : []),
  );
  return { ...base, ...vars };
}

/** Gives up on a step that takes far longer than it should, rather than hanging the suite. */
function guard<T>(work: Promise<T>, what: string, ms = 30_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: nothing in ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// deno-lint-ignore no-explicit-any
type Json = any;

/** A REST call with the API key: the status and the parsed body. */
const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
  restCall(server, KEY, method, path, body);

/**
 * A webhook receiver that accepts the first call and never answers it (until closed); later
 * calls get 200 at once.
 */
function hangingReceiver() {
  const received: { headers: Headers; body: string }[] = [];
  const release = Promise.withResolvers<void>();
  let arrivals: (() => void)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    received.push({ headers: req.headers, body });
    const first = received.length === 1;
    arrivals.splice(0).forEach((notify) => notify());
    if (first) await release.promise;
    return new Response(null, { status: 200 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    received,
    /** Resolves once `count` calls have arrived. */
    arrived(count: number): Promise<void> {
      return new Promise((resolve) => {
        const check = () => received.length >= count ? resolve() : arrivals.push(check);
        check();
      });
    },
    close: async () => {
      release.resolve();
      arrivals = [];
      await server.shutdown();
    },
  };
}

async function killBetweenClaimAndSend(database: Record<string, string>) {
  const dataDir = await Deno.makeTempDir({ prefix: "notification-kill-e2e-" });
  const target = await startTarget();
  const hook = hangingReceiver();
  const vars = env({
    ...database,
    DATA_DIR: dataDir,
    SERVICE_API_KEY: KEY,
    PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
    PROBE_INTERVAL_SECONDS: "86400",
    NOTIFICATION_LEASE_MS: String(LEASE_MS),
    // The two servers listen on different ports: the same public address gives the same link.
    PUBLIC_URL: "https://probes.example.com",
  });
  const start = () =>
    startServerProcess({
      env: vars,
      clearEnv: true,
      output: "capture",
      readyLine: isListeningLine,
    });
  const started: ServerProcess[] = [];
  try {
    const first = await start();
    started.push(first);
    const created = await call(first, "POST", "/notification-targets", {
      name: "ops-hook",
      kind: "webhook",
      url: hook.url,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const secret: string = created.body.data.secret;
    const policy = await call(first, "PATCH", "/settings/alerts", {
      targets: ["ops-hook"],
      failure_threshold: 1,
    });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    assert.equal((await call(first, "POST", "/projects", { project: "shop" })).status, 201);
    const probe = await call(first, "POST", "/projects/shop/probes", {
      url: `${target.origin}/status/500`,
    });
    assert.equal(probe.status, 201, JSON.stringify(probe.body));
    const run = await call(first, "POST", `/projects/shop/probes/${probe.body.data.probe_id}/run`);
    assert.equal(run.body.data.outcome, "down");

    // The deliverer claimed the notification and is sending it: the receiver holds the call.
    await guard(hook.arrived(1), "the first call", 20_000);
    first.kill("SIGKILL");
    await first.status;
    const [incident] = (await guard(
      (async () => {
        const second = await start();
        started.push(second);
        return (await call(second, "GET", "/incidents?state=open")).body.data;
      })(),
      "the second server",
    )) as Json[];
    const second = started[1];
    assert.ok(incident, "the incident survived the kill");

    // Once the lease has run out, the new server sends it again, with the same id.
    await guard(hook.arrived(2), "the call from the second server");
    const [killed, again] = hook.received;
    const id = killed.headers.get("webhook-id");
    assert.match(id ?? "", /^msg_[0-9a-f]{32}$/);
    assert.equal(again.headers.get("webhook-id"), id);
    assert.equal(again.body, killed.body);
    const event = new Webhook(secret).verify(again.body, Object.fromEntries(again.headers)) as Json;
    assert.equal(event.type, "probe.down");
    assert.equal(event.data.incident_id, incident.id);

    // The outbox shows it delivered, in two attempts (the killed one, claimed and never ended).
    let notifications: Json[] = [];
    await guard(
      (async () => {
        while (notifications[0]?.status !== "delivered") {
          await new Promise((resolve) => setTimeout(resolve, 50));
          notifications = (await call(second, "GET", `/incidents/${incident.id}`)).body.data
            .notifications;
        }
      })(),
      "the delivered notification",
    );
    assert.equal(notifications.length, 1);
    assert.equal(notifications[0].id, id);
    assert.equal(notifications[0].target, "ops-hook");
    assert.equal(notifications[0].attempts, 2);
    assert.equal(notifications[0].last_error, null);
    assert.notEqual(notifications[0].delivered_at, null);

    assert.equal((await second.stop()).code, 0);
    // Delivered once it answered: not sent a third time.
    assert.equal(hook.received.length, 2);
  } finally {
    for (const server of started) await server.stop();
    await hook.close();
    await target.close();
    await Deno.remove(dataDir, { recursive: true });
  }
}

Deno.test("notifications: a server killed mid-send is taken over, same webhook-id (embedded, same DATA_DIR)", async () => {
  await killBetweenClaimAndSend({});
});

Deno.test({
  name: "notifications: a server killed mid-send is taken over, same webhook-id (PostgreSQL)",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const { url, drop } = await createPostgresDatabase();
    try {
      await killBetweenClaimAndSend({ DATABASE_URL: url });
    } finally {
      await drop();
    }
  },
});
