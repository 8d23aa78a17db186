/**
 * Single sign-on against a real OpenID provider (`oidc-provider` on loopback, its own login and
 * consent pages submitted as a browser would), through the service's real edge, on both
 * databases: the role from the groups claim, a user no group maps refused, a callback whose
 * state is not the one this browser started refused, sign-out.
 */
import assert from "node:assert/strict";
import { createApp } from "../app.ts";
import { createLogger } from "../base/log.ts";
import type { OidcConfig } from "../base/config.ts";
import { backends, BASE, freshDatabase, TEST_API_KEY, uniqueName } from "../testing/app.ts";
import { signInAtProvider, startOidcProvider } from "../testing/oidc_provider.ts";
import { createOidcSignIn, rolesOfClaims } from "./oidc.ts";

const CALLBACK = `${BASE}/auth/oidc/callback`;

for (const backend of backends()) {
  Deno.test(`single sign-on with a real OpenID provider [${backend}]`, async (t) => {
    const provider = await startOidcProvider({
      redirectUri: CALLBACK,
      groups: { alice: ["monitor-admins"], bob: ["staff", "monitor-editors"] },
    });
    const oidc: OidcConfig = {
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      name: "Test IdP",
      scopes: "openid email groups",
      defaultRole: null,
      roleClaim: "groups",
      adminGroups: ["monitor-admins"],
      editorGroups: ["monitor-editors"],
      viewerGroups: [],
      allowedDomains: ["example.com"],
    };
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      config: { oidc },
    });
    const call = (path: string, init: RequestInit = {}) =>
      app.handler(new Request(new URL(path, BASE), init));
    const cookieOf = (response: Response, name: string) =>
      response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))?.split(";")[0] ?? "";

    /** Starts a sign-in, signs `login` in at the provider and answers the service's callback. */
    const signIn = async (login: string) => {
      const started = await call("/auth/oidc/start");
      assert.equal(started.status, 302);
      const flow = cookieOf(started, "probe-oidc");
      const to = new URL(started.headers.get("location")!);
      assert.equal(to.origin, provider.issuer);
      assert.equal(to.searchParams.get("code_challenge_method"), "S256");
      assert.ok(to.searchParams.get("state") && to.searchParams.get("nonce"));
      const back = await signInAtProvider(to.href, login, CALLBACK);
      return { back, flow, answer: await call(back, { headers: { cookie: flow } }) };
    };

    try {
      await t.step("the sign-in page offers the provider", async () => {
        const session = await (await call("/auth/session")).json();
        assert.deepEqual(session.data, {
          session: null,
          ended: false,
          oidc: { name: "Test IdP", start: "/auth/oidc/start" },
        });
      });

      await t.step("a user of the admins group signs in as admin, and out", async () => {
        const { answer } = await signIn("alice");
        assert.equal(answer.status, 303, await answer.clone().text());
        assert.equal(answer.headers.get("location"), "/");
        const cookie = cookieOf(answer, "probe-session");
        assert.match(cookie, /^probe-session=pds_/);
        // The flow's cookie is cleared.
        assert.match(answer.headers.getSetCookie().join("\n"), /probe-oidc=; .*Max-Age=0/);
        const session = await (await call("/auth/session", { headers: { cookie } })).json();
        assert.equal(session.data.session.name, "alice@example.com");
        assert.equal(session.data.session.role, "admin");
        assert.equal(session.data.session.kind, "oidc");
        const made = await call("/api/v1/projects", {
          method: "POST",
          headers: { cookie, origin: BASE, "content-type": "application/json" },
          body: JSON.stringify({ project: uniqueName("sso") }),
        });
        assert.equal(made.status, 201, await made.text());
        // The audit log names the user.
        const audit = await call("/api/v1/audit-log?actor=alice@example.com", {
          headers: { "x-service-api-key": TEST_API_KEY },
        });
        const entries = (await audit.json()).data;
        assert.deepEqual(
          [entries[0]?.actor, entries[0]?.actor_source],
          ["alice@example.com", "session"],
          JSON.stringify(entries),
        );
        const out = await call("/auth/sign-out", {
          method: "POST",
          headers: { cookie, origin: BASE },
        });
        assert.equal(out.status, 204);
        assert.equal((await call("/api/v1/projects", { headers: { cookie } })).status, 401);
      });

      await t.step("the editors group gives an editor, who may not administer", async () => {
        const { answer } = await signIn("bob");
        const cookie = cookieOf(answer, "probe-session");
        const session = await (await call("/auth/session", { headers: { cookie } })).json();
        assert.equal(session.data.session.role, "editor");
        const settings = await call("/api/v1/settings/alerts", {
          method: "PATCH",
          headers: { cookie, origin: BASE, "content-type": "application/json" },
          body: JSON.stringify({ failure_threshold: 2 }),
        });
        assert.equal(settings.status, 403);
      });

      await t.step("a user no group maps is refused (no default role)", async () => {
        const { answer } = await signIn("carol");
        assert.equal(answer.status, 403);
        assert.equal(
          answer.headers.get("set-cookie")?.includes("probe-session=pds_") ?? false,
          false,
        );
        assert.match(await answer.text(), /no role here/);
      });

      await t.step("a callback this browser did not start is refused", async () => {
        const first = await signIn("alice");
        // Another sign-in's flow cookie: its state and verifier are not this callback's.
        const other = await call("/auth/oidc/start");
        const refused = await call(first.back, {
          headers: { cookie: cookieOf(other, "probe-oidc") },
        });
        assert.equal(refused.status, 403);
        assert.equal(cookieOf(refused, "probe-session"), "");
        const none = await call(first.back);
        assert.equal(none.status, 400);
      });
    } finally {
      await app.close();
      await provider.close();
    }
  });
}

Deno.test("an OpenID provider that cannot be reached: the sign-in says so (503), not a 500", async () => {
  const logged: string[] = [];
  const oidc = createOidcSignIn(
    {
      issuer: "http://127.0.0.1:9",
      clientId: "c",
      clientSecret: "s",
      name: "Nowhere",
      scopes: "openid",
      defaultRole: "viewer",
      roleClaim: "groups",
      adminGroups: [],
      editorGroups: [],
      viewerGroups: [],
      allowedDomains: [],
    },
    {},
    { log: (message) => logged.push(message) },
  );
  const url = new URL(`${BASE}/auth/oidc/start`);
  const answer = await oidc.handle(new Request(url), url, "/start", {
    signIn: () => Promise.reject(new Error("not reached")),
  });
  assert.equal(answer?.status, 503);
  assert.match(await answer!.text(), /could not be reached/);
  assert.deepEqual(logged, ["the OpenID provider could not be reached"]);
});

Deno.test("claims to a role and projects: groups, default role, email domains, projects claim", () => {
  const config: OidcConfig = {
    issuer: "https://sso.example.com",
    clientId: "c",
    clientSecret: "s",
    name: "SSO",
    scopes: "openid",
    defaultRole: null,
    roleClaim: "roles",
    adminGroups: ["ops"],
    editorGroups: ["dev"],
    viewerGroups: ["support"],
    allowedDomains: ["example.com"],
    projectsClaim: "monitor_projects",
  };
  const user = { sub: "u1", email: "Ann@Example.com", email_verified: true };
  /** Why the claims are refused, or "" when they are not. */
  const refusal = (claims: Record<string, unknown>) => {
    const verdict = rolesOfClaims(config, claims);
    return "refused" in verdict ? verdict.refused : "";
  };
  assert.deepEqual(
    rolesOfClaims(config, { ...user, roles: ["dev", "ops"], monitor_projects: ["shop"] }),
    {
      name: "Ann@Example.com",
      role: "admin",
      projects: ["shop"],
    },
  );
  // A string claim, split at commas and spaces; no projects claim: no project.
  assert.deepEqual(rolesOfClaims(config, { ...user, roles: "support, other" }), {
    name: "Ann@Example.com",
    role: "viewer",
    projects: [],
  });
  assert.match(refusal({ ...user, roles: ["x"] }), /no role/);
  assert.deepEqual(
    rolesOfClaims({ ...config, defaultRole: "viewer", projectsClaim: undefined }, { ...user }),
    { name: "Ann@Example.com", role: "viewer", projects: null },
  );
  for (
    const claims of [
      { sub: "u2", roles: ["ops"] },
      { ...user, email: "ann@elsewhere.org", roles: ["ops"] },
      { ...user, email_verified: false, roles: ["ops"] },
    ]
  ) {
    assert.match(
      refusal(claims),
      /email domain/,
      JSON.stringify(claims),
    );
  }
  // Without an email, the subject names the user.
  assert.deepEqual(
    rolesOfClaims({ ...config, allowedDomains: [] }, { sub: "u3", roles: ["dev"] }),
    { name: "u3", role: "editor", projects: [] },
  );
});
