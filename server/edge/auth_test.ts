/**
 * Dashboard sessions through the real edge (`createApp`'s handler), on both databases: sign-in
 * with a key sets an HttpOnly, SameSite=Lax cookie (Secure and `__Host-` over HTTPS) and keeps no
 * key; the cookie alone reads the API; a change through it needs the service's own origin (403
 * otherwise); sign-out, an end by another instance (within a second) and the key's end each stop
 * it; idle and absolute lifetimes by a fake clock.
 */
import assert from "node:assert/strict";
import { createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import { systemClock } from "../base/clock.ts";
import { createSessions } from "../domain/access/sessions.ts";
import {
  backends,
  BASE,
  freshDatabase,
  TEST_API_KEY,
  TEST_READ_KEY,
  uniqueName,
} from "../testing/app.ts";

const IDLE_MS = 60 * 60_000;
const ABSOLUTE_MS = 4 * IDLE_MS;

/** An app with a clock the test moves, and a way to call it as a browser on `BASE` would. */
async function sessionApp(backend: "pglite" | "postgres", publicUrl?: string) {
  let now = Date.parse("2026-11-29T00:00:00Z");
  const app = await createApp({
    database: await freshDatabase(backend),
    apiKeys: [TEST_API_KEY],
    log: createLogger("silent"),
    config: {
      readOnlyApiKeys: [TEST_READ_KEY],
      publicUrl,
      sessions: { idleMs: IDLE_MS, absoluteMs: ABSOLUTE_MS },
    },
    clock: { ...systemClock, now: () => now },
  });
  const call = async (
    method: string,
    path: string,
    { cookie, body, headers = {} }: {
      cookie?: string;
      body?: unknown;
      headers?: Record<string, string>;
    } = {},
  ) => {
    const sent = new Headers(headers);
    if (cookie) sent.set("cookie", cookie);
    if (body !== undefined) sent.set("content-type", "application/json");
    const response = await app.handler(
      new Request(`${BASE}${path}`, {
        method,
        headers: sent,
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text ? JSON.parse(text) : null,
    };
  };
  const own = { origin: BASE };
  /** Signs in with `key`: the cookie to send back (`name=value`) and the answer. */
  const signIn = async (key: string) => {
    const answer = await call("POST", "/auth/sign-in", { body: { api_key: key }, headers: own });
    const setCookie = answer.headers.get("set-cookie") ?? "";
    return { answer, setCookie, cookie: setCookie.split(";")[0] };
  };
  return { app, call, signIn, own, tick: (ms: number) => now += ms };
}

for (const backend of backends()) {
  Deno.test(`dashboard sessions [${backend}]`, async (t) => {
    const s = await sessionApp(backend);
    try {
      await t.step(
        "signing in with a key sets an HttpOnly SameSite cookie and no key",
        async () => {
          const { answer, setCookie, cookie } = await s.signIn(TEST_API_KEY);
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          assert.equal(answer.body.data.role, "admin");
          assert.equal(answer.body.data.name, "key SERVICE_API_KEY");
          assert.equal(answer.body.data.kind, "key");
          const attributes = setCookie.split("; ").slice(1);
          assert.deepEqual(attributes.sort(), [
            "HttpOnly",
            `Max-Age=${ABSOLUTE_MS / 1000}`,
            "Path=/",
            "SameSite=Lax",
          ]);
          assert.match(cookie, /^probe-session=pds_[\w-]{43}$/);
          assert.ok(!JSON.stringify(answer.body).includes(TEST_API_KEY));
          assert.ok(!setCookie.includes(TEST_API_KEY));
        },
      );

      await t.step("a sign-in's body: the key, or a documented refusal", async () => {
        const refusals: [BodyInit, number, string][] = [
          ["not json", 400, "malformed_json"],
          [JSON.stringify({ key: TEST_API_KEY }), 422, "validation_failed"],
          [JSON.stringify({ api_key: "" }), 422, "validation_failed"],
          [JSON.stringify({ api_key: "x".repeat(5000) }), 413, "payload_too_large"],
        ];
        for (const [raw, status, code] of refusals) {
          const answer = await s.app.handler(
            new Request(`${BASE}/auth/sign-in`, { method: "POST", headers: s.own, body: raw }),
          );
          const body = await answer.json();
          assert.deepEqual([answer.status, body.error.code], [status, code], String(raw));
          assert.equal(answer.headers.get("set-cookie"), null);
        }
      });

      await t.step("a wrong key is refused 401 and sets no cookie", async () => {
        const { answer, setCookie } = await s.signIn("not-a-key-0123456789");
        assert.equal(answer.status, 401);
        assert.equal(answer.body.error.code, "unauthorized");
        assert.equal(setCookie, "");
      });

      await t.step(
        "the cookie alone reads the API; a change needs the service's origin",
        async () => {
          const { cookie } = await s.signIn(TEST_API_KEY);
          assert.equal((await s.call("GET", "/api/v1/projects")).status, 401);
          assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 200);
          const project = { project: uniqueName("sess") };
          const crossSite: Record<string, string>[] = [
            {},
            { origin: "https://evil.example" },
            { "sec-fetch-site": "cross-site", origin: BASE },
            { "sec-fetch-site": "same-site" },
          ];
          for (const headers of crossSite) {
            const refused = await s.call("POST", "/api/v1/projects", {
              cookie,
              body: project,
              headers,
            });
            assert.equal(refused.status, 403, JSON.stringify(headers));
            assert.equal(refused.body.error.code, "forbidden");
            assert.match(refused.body.error.message, /own origin/);
          }
          const trpc = await s.call("POST", "/trpc/projects.create", {
            cookie,
            body: project,
            headers: { origin: "https://evil.example" },
          });
          assert.equal(trpc.status, 403);
          assert.equal(
            (await s.call("GET", `/api/v1/projects/${project.project}`, { cookie })).status,
            404,
          );
          const made = await s.call("POST", "/api/v1/projects", {
            cookie,
            body: project,
            headers: s.own,
          });
          assert.equal(made.status, 201, JSON.stringify(made.body));
          const sameOrigin = await s.call("DELETE", `/api/v1/projects/${project.project}`, {
            cookie,
            headers: { "sec-fetch-site": "same-origin" },
          });
          assert.ok(sameOrigin.status < 300, JSON.stringify(sameOrigin.body));
          // Signing in from another site is refused too (it would sign the browser in to a key).
          const crossSignIn = await s.call("POST", "/auth/sign-in", {
            body: { api_key: TEST_API_KEY },
            headers: { origin: "https://evil.example" },
          });
          assert.equal(crossSignIn.status, 403);
          assert.equal(crossSignIn.headers.get("set-cookie"), null);
        },
      );

      await t.step("a viewer key's session reads and may not change", async () => {
        const { answer, cookie } = await s.signIn(TEST_READ_KEY);
        assert.equal(answer.body.data.role, "viewer");
        assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 200);
        const refused = await s.call("POST", "/api/v1/projects", {
          cookie,
          body: { project: uniqueName("v") },
          headers: s.own,
        });
        assert.equal(refused.status, 403);
      });

      await t.step("GET /auth/session tells the session, and null without one", async () => {
        const { cookie } = await s.signIn(TEST_API_KEY);
        const mine = await s.call("GET", "/auth/session", { cookie });
        assert.equal(mine.status, 200);
        assert.equal(mine.body.data.session.role, "admin");
        assert.equal(mine.body.data.oidc, null);
        const none = await s.call("GET", "/auth/session");
        assert.equal(none.body.data.session, null);
        assert.equal(none.body.data.ended, false);
        await s.call("POST", "/auth/sign-out", { cookie, headers: s.own });
        const ended = await s.call("GET", "/auth/session", { cookie });
        assert.deepEqual([ended.body.data.session, ended.body.data.ended], [null, true]);
      });

      await t.step("sign-out ends the session at once and clears the cookie", async () => {
        const { cookie } = await s.signIn(TEST_API_KEY);
        assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 200);
        const out = await s.call("POST", "/auth/sign-out", { cookie, headers: s.own });
        assert.equal(out.status, 204);
        assert.match(
          out.headers.get("set-cookie")!,
          /^probe-session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/,
        );
        assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 401);
      });

      await t.step("a session ended by another instance stops within a second", async () => {
        const { answer, cookie } = await s.signIn(TEST_API_KEY);
        assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 200);
        // Another instance over the same database.
        const other = createSessions({
          db: s.app.database.db,
          lifetimes: { idleMs: IDLE_MS, absoluteMs: ABSOLUTE_MS },
          keyPrincipal: () => null,
        });
        assert.equal(await other.end(answer.body.data.id), true);
        // Seen in the last second: answered from memory, no query.
        assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 200);
        s.tick(1001);
        assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 401);
      });

      await t.step(
        "the sessions API: an admin lists and ends anyone's, a viewer its own",
        async () => {
          const admin = await s.signIn(TEST_API_KEY);
          const viewer = await s.signIn(TEST_READ_KEY);
          const key = { "x-service-api-key": TEST_API_KEY };
          const all = await s.call("GET", "/api/v1/sessions", { headers: key });
          assert.equal(all.status, 200, JSON.stringify(all.body));
          const ids = all.body.data.map((x: { id: string }) => x.id);
          assert.ok(
            ids.includes(admin.answer.body.data.id) && ids.includes(viewer.answer.body.data.id),
          );
          assert.ok(!JSON.stringify(all.body).includes("pds_"), "no token in the list");
          // A viewer's session sees only the sessions of its key, and may end only those.
          const own = await s.call("GET", "/api/v1/sessions", { cookie: viewer.cookie });
          assert.deepEqual(
            [...new Set(own.body.data.map((x: { name: string }) => x.name))],
            ["key SERVICE_API_KEYS_READONLY"],
          );
          const notMine = await s.call("DELETE", `/api/v1/sessions/${admin.answer.body.data.id}`, {
            cookie: viewer.cookie,
            headers: s.own,
          });
          assert.equal(notMine.status, 404);
          // An admin ends the viewer's session: it stops at once on this instance.
          const ended = await s.call("DELETE", `/api/v1/sessions/${viewer.answer.body.data.id}`, {
            headers: key,
          });
          assert.equal(ended.status, 204, JSON.stringify(ended.body));
          assert.equal(
            (await s.call("GET", "/api/v1/projects", { cookie: viewer.cookie })).status,
            401,
          );
          const again = await s.call("DELETE", `/api/v1/sessions/${viewer.answer.body.data.id}`, {
            headers: key,
          });
          assert.equal(again.status, 404);
        },
      );

      await t.step("a session signed in with a key ends when the key is deleted", async () => {
        const key = { "x-service-api-key": TEST_API_KEY };
        const made = await s.call("POST", "/api/v1/api-keys", {
          body: { name: uniqueName("k"), role: "editor" },
          headers: key,
        });
        assert.equal(made.status, 201, JSON.stringify(made.body));
        const { answer, cookie } = await s.signIn(made.body.data.key);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(answer.body.data.name, `key ${made.body.data.name}`);
        assert.equal(answer.body.data.role, "editor");
        assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 200);
        const rotated = await s.call("POST", `/api/v1/api-keys/${made.body.data.name}/rotate`, {
          headers: key,
        });
        assert.equal(rotated.status, 200);
        s.tick(1001);
        assert.equal((await s.call("GET", "/api/v1/projects", { cookie })).status, 401);
        const again = await s.signIn(rotated.body.data.key);
        assert.equal(
          (await s.call("GET", "/api/v1/projects", { cookie: again.cookie })).status,
          200,
        );
        const deleted = await s.call("DELETE", `/api/v1/api-keys/${made.body.data.name}`, {
          headers: key,
        });
        assert.equal(deleted.status, 204);
        s.tick(1001);
        assert.equal(
          (await s.call("GET", "/api/v1/projects", { cookie: again.cookie })).status,
          401,
        );
      });

      await t.step("idle and absolute lifetimes", async () => {
        const idle = await s.signIn(TEST_API_KEY);
        s.tick(IDLE_MS - 5_000);
        assert.equal(
          (await s.call("GET", "/api/v1/projects", { cookie: idle.cookie })).status,
          200,
        );
        // Used, so its idle clock starts again.
        s.tick(IDLE_MS - 5_000);
        assert.equal(
          (await s.call("GET", "/api/v1/projects", { cookie: idle.cookie })).status,
          200,
        );
        s.tick(IDLE_MS + 1);
        assert.equal(
          (await s.call("GET", "/api/v1/projects", { cookie: idle.cookie })).status,
          401,
        );

        const busy = await s.signIn(TEST_API_KEY);
        for (let used = 0; used < ABSOLUTE_MS - IDLE_MS / 2; used += IDLE_MS / 2) {
          s.tick(IDLE_MS / 2);
          assert.equal(
            (await s.call("GET", "/api/v1/projects", { cookie: busy.cookie })).status,
            200,
          );
        }
        s.tick(IDLE_MS / 2 + 1);
        assert.equal(
          (await s.call("GET", "/api/v1/projects", { cookie: busy.cookie })).status,
          401,
        );
      });
    } finally {
      await s.app.close();
    }
  });

  Deno.test(`dashboard sessions over HTTPS: Secure and __Host- [${backend}]`, async () => {
    const s = await sessionApp(backend, "https://monitor.example");
    try {
      // Behind a proxy the browser's origin is PUBLIC_URL's.
      const signedIn = await s.call("POST", "/auth/sign-in", {
        body: { api_key: TEST_API_KEY },
        headers: { origin: "https://monitor.example" },
      });
      assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
      const set = signedIn.headers.get("set-cookie")!;
      assert.match(set, /^__Host-probe-session=pds_/);
      assert.ok(set.split("; ").includes("Secure"));
      const reads = await s.call("GET", "/api/v1/projects", { cookie: set.split(";")[0] });
      assert.equal(reads.status, 200);
      // The plain name is not read over HTTPS.
      const plain = set.split(";")[0].replace("__Host-", "");
      assert.equal((await s.call("GET", "/api/v1/projects", { cookie: plain })).status, 401);
    } finally {
      await s.app.close();
    }
  });
}
