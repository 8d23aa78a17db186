/**
 * Public status pages through the real handler, without a key: private pages answer as missing
 * ones do, public ones show states, 90 UTC days of uptime and incidents, and never an error
 * text, an address or (unless shown) a URL.
 */
import assert from "node:assert/strict";
import { publicStatusPage, STATUS_PAGE_DAYS } from "@probe/shared";
import type { Outcome } from "@probe/shared";
import { apiSuite, BASE, type TestClient, type TestContext, uniqueName } from "../testing/app.ts";
import { startTarget, type Target } from "../testing/target_server.ts";
import { insertRuns, type Run } from "../runner/store.ts";
import { createStatusPages, PUBLIC_CACHE_MS } from "./status_page.ts";

const DAY = 86_400_000;
const anonymous = { key: null };
const pagePath = (project: string) => `/status/${project}`;
const jsonPath = (project: string) => `/status/${project}/status.json`;
const settingsPath = (project: string) => `/api/v1/projects/${project}/status-page`;

async function newProject(api: TestClient, name = uniqueName("sp")): Promise<string> {
  const res = await api.post("/api/v1/projects", { project: name });
  assert.equal(res.status, 201, res.text);
  return name;
}

async function makePublic(api: TestClient, project: string, fields: object = {}) {
  const res = await api.patch(settingsPath(project), { public: true, ...fields });
  assert.equal(res.status, 200, res.text);
}

/** A probe of `project`; its internal key, for runs written straight to the store. */
async function newProbe(
  { api, app }: TestContext,
  project: string,
  body: { url: string; label?: string },
): Promise<{ probeId: string; key: string; path: string }> {
  const res = await api.post(`/api/v1/projects/${project}/probes`, body);
  assert.equal(res.status, 201, res.text);
  const probeId: string = res.body.data.probe_id;
  const row = await app.database.db.selectFrom("probes").select("key")
    .where("project", "=", project).where("probe_id", "=", probeId).executeTakeFirstOrThrow();
  return { probeId, key: String(row.key), path: `/api/v1/projects/${project}/probes/${probeId}` };
}

function run(key: string, at: number, outcome: Outcome, inMaintenance = false): Run {
  return {
    key,
    due: at,
    inMaintenance,
    result: {
      startedAt: new Date(at),
      durationMs: 40,
      outcome,
      httpStatus: outcome === "blocked" ? null : outcome === "down" ? 503 : 200,
      error: outcome === "up" ? null : "secret failure at 10.1.2.3",
      address: "10.1.2.3",
    },
  };
}

/** Noon (UTC) `days` days before today. */
const noonDaysAgo = (days: number) => Math.floor(Date.now() / DAY) * DAY - days * DAY + DAY / 2;

/** Three failing manual runs open an incident (the default threshold); two passing resolve it. */
async function incidentThatEnded(api: TestClient, target: Target, probePath: string) {
  target.setHealth(500, { status: "DOWN" });
  for (let i = 0; i < 3; i++) assert.equal((await api.post(`${probePath}/run`)).status, 200);
  target.setHealth(200, { status: "UP" });
  for (let i = 0; i < 2; i++) assert.equal((await api.post(`${probePath}/run`)).status, 200);
}

/** Every error text and address the API holds for a probe: none may reach a public page. */
async function privateTexts(api: TestClient, probePath: string): Promise<string[]> {
  const results = (await api.get(`${probePath}/results?limit=1000`)).body.data as {
    error: string | null;
    address: string | null;
  }[];
  const incidents = (await api.get("/api/v1/incidents?limit=500")).body.data as {
    cause: string;
    last_error: string | null;
  }[];
  return [
    ...results.flatMap((r) => [r.error, r.address]),
    ...incidents.flatMap((i) => [i.cause, i.last_error]),
  ].filter((s): s is string => s !== null && s !== "");
}

const headersOf = (h: Headers) => [...h.entries()];

apiSuite("public status pages", (test) => {
  test("a page that is not public answers 404 exactly as a missing project does", async ({ api }) => {
    const neverSet = await newProject(api);
    const turnedOff = await newProject(api);
    await makePublic(api, turnedOff);
    assert.equal((await api.get(pagePath(turnedOff), anonymous)).status, 200);
    const off = await api.patch(settingsPath(turnedOff), { public: false });
    assert.equal(off.body.data.public, false);
    const missing = uniqueName("nobody");
    for (const path of [pagePath, jsonPath]) {
      const absent = await api.get(path(missing), anonymous);
      assert.equal(absent.status, 404);
      for (const project of [neverSet, turnedOff]) {
        const res = await api.get(path(project), anonymous);
        assert.equal(res.status, 404, path(project));
        assert.equal(res.text, absent.text);
        assert.deepEqual(headersOf(res.headers), headersOf(absent.headers));
      }
      // A key changes nothing: the page is public or it is not there.
      const withKey = await api.get(path(neverSet));
      assert.equal(withKey.status, 404);
      assert.equal(withKey.text, absent.text);
    }
    const absent = await api.get(pagePath(missing), anonymous);
    assert.equal(absent.headers.get("cache-control"), "no-store");
  });

  test("a public page shows each probe's state, 90 daily bars and incidents, and no private text", async (t) => {
    const { api, app } = t;
    const target = await startTarget();
    try {
      const project = await newProject(api);
      await makePublic(api, project, { title: "Shop status", description: "Our <shop> & API" });
      const named = await newProbe(t, project, { url: `${target.origin}/health`, label: "Web" });
      const unnamed = await newProbe(t, project, { url: `${target.origin}/ok?token=hunter2` });
      await incidentThatEnded(api, target, named.path);
      // Two days ago: 3 up and 1 down; five days ago: maintenance only.
      await insertRuns(app.database.db, "test", [
        ...[0, 1, 2].map((i) => run(named.key, noonDaysAgo(2) + i * 60_000, "up")),
        run(named.key, noonDaysAgo(2) + 5 * 60_000, "down"),
        run(named.key, noonDaysAgo(5), "down", true),
        run(unnamed.key, noonDaysAgo(1), "blocked"),
      ]);

      const res = await api.get(pagePath(project), anonymous);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
      assert.equal(res.headers.get("cache-control"), "public, max-age=30");
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      const csp = res.headers.get("content-security-policy")!;
      assert.match(
        csp,
        /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; script-src 'self'; connect-src 'self';/,
      );
      const html = res.text;
      // One script, its own file: no inline script.
      assert.deepEqual(html.match(/<script[^>]*>[^<]*<\/script>/gi), [
        `<script src="/status/${project}/live.js" defer></script>`,
      ]);
      assert.doesNotMatch(html, / style=/i, "no inline style attribute (the CSP forbids them)");
      assert.match(html, /<h1>Shop status<\/h1>/);
      assert.match(html, /Our &#60;shop&#62; &#38; API/);
      assert.match(html, /<h3>Web<\/h3><span class="state st-up">Operational<\/span>/);
      // Without a label and without shown URLs, a probe is named by its place.
      assert.match(html, /<h3>Check 2<\/h3>/);
      const bars = html.match(/<li class="(ok|warn|bad|none|maint)"/g) ?? [];
      assert.equal(bars.length, 2 * STATUS_PAGE_DAYS);
      const twoDaysAgo = new Date(noonDaysAgo(2)).toISOString().slice(0, 10);
      assert.match(html, new RegExp(`class="bad" title="${twoDaysAgo}, 75.00% up over 4 runs"`));
      assert.match(html, /class="maint" title="[0-9-]+, no counted runs, 1 runs in maintenance"/);
      assert.match(html, /Resolved<\/span><\/h3><p class="muted">Started <time datetime="/);
      assert.match(html, /lasted \d+ s/);

      for (const secret of [...await privateTexts(api, named.path), "127.0.0.1", "hunter2"]) {
        assert.ok(!html.includes(secret), `the page holds "${secret}"`);
      }
      for (const id of [named.probeId, unnamed.probeId, String(target.port)]) {
        assert.ok(!html.includes(id), `the page holds "${id}"`);
      }
    } finally {
      await target.close();
    }
  });

  test("the page never reloads itself: its own script fetches new figures; the incident rule is one sentence", async ({ api }) => {
    const project = await newProject(api);
    await makePublic(api, project);
    // The project's own policy: 4 failures in a row open an incident, 1 pass resolves it.
    const policy = await api.patch(`/api/v1/projects/${project}/alerts`, {
      failure_threshold: 4,
      success_threshold: 1,
    });
    assert.equal(policy.status, 200, policy.text);
    const res = await api.get(pagePath(project), anonymous);
    assert.equal(res.status, 200);
    const html = res.text;
    assert.doesNotMatch(html, /http-equiv="refresh"|reloads itself/);
    const csp = res.headers.get("content-security-policy")!;
    assert.match(csp, /; script-src 'self'; connect-src 'self';/);
    // The parts the script swaps are marked; the script is served beside the page.
    for (const part of ["state", "checks", "incidents", "updated"]) {
      assert.ok(html.includes(`data-live="${part}`), part);
    }
    const script = await api.get(`${pagePath(project)}/live.js`, anonymous);
    assert.equal(script.status, 200);
    assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.match(script.text, /fetch\(location\.href/);
    assert.match(script.text, /querySelectorAll\("\[data-live\]"\)/);
    // A private page's script answers as a missing page does.
    const hidden = await newProject(api);
    assert.equal((await api.get(`${pagePath(hidden)}/live.js`, anonymous)).status, 404);
    assert.match(
      html,
      /<p class="muted rule">An incident opens after 4 failed checks in a row and closes at the first passing one\.<\/p>/,
    );
    const json = await api.get(jsonPath(project), anonymous);
    assert.deepEqual(json.body.incident_rule, { failures: 4, passes: 1 });
  });

  test("location names are hidden unless the page's settings show them", async (t) => {
    const { api } = t;
    const target = await startTarget();
    try {
      const project = await newProject(api);
      await makePublic(api, project);
      const settings = await api.get(settingsPath(project));
      assert.equal(settings.body.data.show_locations, false);
      const probe = await newProbe(t, project, { url: `${target.origin}/ok`, label: "Web" });
      assert.equal((await api.post(`${probe.path}/run`)).status, 200);
      const hiddenJson = await api.get(jsonPath(project), anonymous);
      assert.equal(hiddenJson.body.probes[0].state, "up");
      assert.deepEqual(hiddenJson.body.probes[0].locations, []);
      assert.ok(!(await api.get(pagePath(project), anonymous)).text.includes("local"));

      const bad = await api.patch(settingsPath(project), { show_locations: "yes" });
      assert.equal(bad.status, 422);
      assert.equal(bad.body.error.details[0].path, "show_locations");
      const shown = await api.patch(settingsPath(project), { show_locations: true });
      assert.equal(shown.status, 200, shown.text);
      assert.equal(shown.body.data.show_locations, true);
      const json = await api.get(jsonPath(project), anonymous);
      assert.deepEqual(json.body.probes[0].locations, [{ location: "local", state: "up" }]);
    } finally {
      await target.close();
    }
  });

  test("on a narrow screen the uptime beside the 30 bars shown is of those 30 days", async (t) => {
    const { api, app } = t;
    const project = await newProject(api);
    await makePublic(api, project);
    const probe = await newProbe(t, project, { url: "http://127.0.0.1:9/", label: "Web" });
    // 40 days ago: one failed run; the last 30 days: one passing run.
    await insertRuns(app.database.db, "test", [
      run(probe.key, noonDaysAgo(40), "down"),
      run(probe.key, noonDaysAgo(3), "up"),
    ]);
    const html = (await api.get(pagePath(project), anonymous)).text;
    assert.match(html, /<span class="d90">50\.00% uptime, 90 days<\/span>/);
    assert.match(html, /<span class="d30">100% uptime, 30 days<\/span>/);
  });
  test("a page shows the probes it names, in their order; null shows them all", async (t) => {
    const { api } = t;
    const project = await newProject(api);
    await makePublic(api, project);
    const a = await newProbe(t, project, { url: "https://a.example.com/", label: "A" });
    const b = await newProbe(t, project, { url: "https://b.example.com/", label: "B" });
    await newProbe(t, project, { url: "https://c.example.com/", label: "C" });
    const names = async () =>
      publicStatusPage.parse((await api.get(jsonPath(project), anonymous)).body).probes
        .map((p) => p.name);
    assert.deepEqual(await names(), ["A", "B", "C"]);

    const chosen = await api.patch(settingsPath(project), { probe_ids: [b.probeId, a.probeId] });
    assert.equal(chosen.status, 200, chosen.text);
    assert.deepEqual(chosen.body.data.probe_ids, [b.probeId, a.probeId]);
    assert.deepEqual(await names(), ["B", "A"]);
    const html = await (await api.get(pagePath(project), anonymous)).text;
    assert.ok(html.includes("B") && !html.includes(">C<"), "the page leaves C out");

    // Unknown, repeated and malformed ids: 422 naming each entry, nothing changed.
    const bad = await api.patch(settingsPath(project), {
      probe_ids: [a.probeId, "0123456789abcdef", a.probeId],
    });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path), [
      "probe_ids.1",
      "probe_ids.2",
    ]);
    const malformed = await api.patch(settingsPath(project), { probe_ids: ["nope"] });
    assert.equal(malformed.status, 422, malformed.text);
    assert.equal(malformed.body.error.details[0].path, "probe_ids.0");
    assert.deepEqual(await names(), ["B", "A"]);

    // A probe deleted is left out (once the page is read again: a settings change reads it at
    // once); null is every probe again.
    assert.equal((await api.delete(b.path)).status, 204);
    assert.equal((await api.patch(settingsPath(project), { title: "Shop" })).status, 200);
    assert.deepEqual(await names(), ["A"]);
    const all = await api.patch(settingsPath(project), { probe_ids: null });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(await names(), ["A", "C"]);
  });

  test("the JSON twin holds what the page shows, as data", async (t) => {
    const { api, app } = t;
    const target = await startTarget();
    try {
      const project = await newProject(api);
      await makePublic(api, project);
      const probe = await newProbe(t, project, { url: `${target.origin}/health`, label: "API" });
      await incidentThatEnded(api, target, probe.path);
      await insertRuns(app.database.db, "test", [
        run(probe.key, noonDaysAgo(3), "up"),
        run(probe.key, noonDaysAgo(3) + 60_000, "degraded"),
      ]);
      const res = await api.get(jsonPath(project), anonymous);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "application/json");
      assert.equal(res.headers.get("cache-control"), "public, max-age=30");
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      const page = publicStatusPage.strict().parse(res.body);
      assert.equal(page.project, project);
      assert.equal(page.title, project, "no title, no label: the project's name");
      assert.equal(page.description, null);
      assert.equal(page.status, "up");
      assert.equal(page.in_maintenance, false);
      assert.equal(page.probes.length, 1);
      const [shown] = page.probes;
      assert.equal(shown.name, "API");
      assert.equal(shown.url, null);
      assert.equal(shown.state, "up");
      assert.equal(shown.days.length, STATUS_PAGE_DAYS);
      assert.equal(shown.days.at(-1)!.date, new Date().toISOString().slice(0, 10));
      assert.equal(
        shown.days[0].date,
        new Date(Date.now() - (STATUS_PAGE_DAYS - 1) * DAY).toISOString().slice(0, 10),
      );
      const day = shown.days.find((d) =>
        d.date === new Date(noonDaysAgo(3)).toISOString().slice(0, 10)
      )!;
      assert.deepEqual(day, { date: day.date, runs: 2, uptime: 1, maintenance: 0 });
      // Today: 3 failing and 2 passing manual runs.
      assert.deepEqual(shown.days.at(-1)!.runs, 5);
      assert.equal(shown.days.at(-1)!.uptime, 2 / 5);
      assert.equal(shown.uptime, 4 / 7);
      assert.equal(page.incidents.length, 1);
      const [incident] = page.incidents;
      assert.deepEqual(Object.keys(incident).sort(), [
        "duration_seconds",
        "probe",
        "resolved_at",
        "started_at",
        "state",
      ]);
      assert.equal(incident.probe, "API");
      assert.equal(incident.state, "resolved");
      assert.ok(Date.parse(incident.resolved_at!) >= Date.parse(incident.started_at));
      assert.equal(typeof incident.duration_seconds, "number");
      for (const secret of [...await privateTexts(api, probe.path), "127.0.0.1"]) {
        assert.ok(!res.text.includes(secret), `the JSON holds "${secret}"`);
      }
      assert.ok(!res.text.includes(probe.probeId));
    } finally {
      await target.close();
    }
  });

  test("with show_urls, probes show their URL without credentials or query values, and still no error text", async (t) => {
    const { api, app } = t;
    const project = await newProject(api);
    await makePublic(api, project, { show_urls: true });
    const probe = await newProbe(t, project, {
      // A bare query part and a fragment may hold tokens too.
      url: "https://user:pa55word@shop.example/health?key=s3cret&v=1&s3cret-bare#s3cret-frag",
    });
    await insertRuns(app.database.db, "test", [run(probe.key, noonDaysAgo(1), "down")]);
    const page = (await api.get(jsonPath(project), anonymous)).body;
    assert.equal(page.probes[0].url, "https://shop.example/health?key&v");
    assert.equal(page.probes[0].name, "https://shop.example/health?key&v");
    const html = (await api.get(pagePath(project), anonymous)).text;
    assert.match(html, /<p class="url">https:\/\/shop.example\/health\?key&#38;v<\/p>/);
    for (const text of [html, JSON.stringify(page)]) {
      for (const secret of ["pa55word", "s3cret", "secret failure", "10.1.2.3", "user:"]) {
        assert.ok(!text.includes(secret), `"${secret}" is shown`);
      }
    }
  });

  test("a project named shop.json has its page at /status/shop.json", async ({ api }) => {
    const project = await newProject(api, `${uniqueName("shop")}.json`);
    assert.equal((await api.get(pagePath(project), anonymous)).status, 404);
    await makePublic(api, project, { title: "Dotted" });
    const page = await api.get(pagePath(project), anonymous);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type")!, /^text\/html/);
    assert.match(page.text, /<h1>Dotted<\/h1>/);
    const json = await api.get(jsonPath(project), anonymous);
    assert.equal(json.status, 200);
    assert.equal(json.body.project, project);
    // The settings name the two paths.
    const settings = (await api.get(settingsPath(project))).body.data;
    assert.equal(settings.page_path, `/status/${project}`);
    assert.equal(settings.json_path, `/status/${project}/status.json`);
  });

  test("only GET and HEAD of exact paths are pages", async ({ api }) => {
    const project = await newProject(api);
    await makePublic(api, project);
    const head = await api.call("HEAD", pagePath(project), anonymous);
    assert.equal(head.status, 200);
    assert.equal(head.text, "");
    assert.equal(head.headers.get("cache-control"), "public, max-age=30");
    for (
      const path of [
        `${pagePath(project)}/`,
        `${pagePath(project)}/other.json`,
        "/status/",
        "/status",
        `/status/${project}%2Fstatus.json`,
        "/status/-leading-dash",
      ]
    ) {
      const res = await api.get(path, anonymous);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get("cache-control"), "no-store", path);
    }
    const post = await api.post(pagePath(project), {}, anonymous);
    assert.equal(post.status, 404);
  });

  test("a page is read once per period, and a settings change shows at once", async ({ api, app }) => {
    let now = Date.now();
    const pages = createStatusPages({ db: app.database.db, now: () => now });
    const get = async (project: string) => {
      const url = new URL(`${BASE}${jsonPath(project)}`);
      const res = await pages(new Request(url), url);
      return res && await res.json();
    };
    const project = await newProject(api);
    await makePublic(api, project, { title: "Before" });
    assert.equal((await get(project)).title, "Before");
    // Changed behind the service's back: the kept page is answered until it expires.
    await app.database.db.updateTable("status_pages").set({ title: "Behind" })
      .where("project", "=", project).execute();
    assert.equal((await get(project)).title, "Before");
    now += PUBLIC_CACHE_MS + 1;
    assert.equal((await get(project)).title, "Behind");
    // Changed through the API: shown at once.
    await api.patch(settingsPath(project), { title: "After" });
    assert.equal((await get(project)).title, "After");
    await api.patch(settingsPath(project), { public: false });
    assert.equal(await get(project), null);
  });
});
