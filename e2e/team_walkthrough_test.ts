/**
 * A team starts using the service, as a new user would on a fresh clone: the service started as
 * `deno task start` runs it, its admin key in SERVICE_API_KEY, two projects with a probe each. In
 * a real headless Chromium (driven by e2e/testdata/team_browser.ts), signed in with the admin key:
 *
 * - the keys page makes a viewer key and an editor key limited to one project, each shown once
 *   and copied with its button;
 * - each is used over REST as a team's script would: the viewer reads but cannot change; the
 *   scoped editor changes a probe of its project, gets 404 for the other and does not see it in
 *   lists; signed in to the dashboard, it sees its project alone;
 * - the viewer's key is revoked from its row: it is refused at once;
 * - the audit page says who did what: the editor's change under its key's name, the admin's
 *   under its session's, each actor filter showing that actor's entries alone.
 *
 * No axe-core finding, CSP violation or page error on the way. On PostgreSQL when
 * TEST_DATABASE_URL is set, else embedded.
 */
import assert from "node:assert/strict";
import { assertChromium, CHROMIUM, skipWithoutChromium } from "./testdata/chromium.ts";
import { uniqueName } from "../server/testing/app.ts";
import type { ServerProcess } from "../server/testing/process.ts";
import type { TeamArgs, TeamReport } from "./testdata/team_browser.ts";
import { runBrowserScript, walkthroughPlaces } from "./testdata/browser_run.ts";

const KEY = "team-e2e-admin-key-0123456789";
const BROWSER_SCRIPT = new URL("./testdata/team_browser.ts", import.meta.url);

/** A REST call with `key`: its status and its body (null when none). */
async function rest(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const response = await fetch(`${baseUrl}/api/v1${path}`, {
    method,
    headers: { "x-service-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

Deno.test({
  name: "a new team from the dashboard: a viewer and a project-scoped editor made, used and " +
    "revoked, who did what in the audit page (Chromium)",
  ignore: skipWithoutChromium("a team's keys from the dashboard"),
  async fn() {
    assertChromium();
    const began = Date.now();
    const places = await walkthroughPlaces("team");
    let server: ServerProcess | undefined;
    try {
      // Probes run when created, then daily: nothing else writes while the team works.
      server = await places.start({ SERVICE_API_KEY: KEY, PROBE_INTERVAL_SECONDS: "86400" });
      const url = server.url;
      const admin = (method: string, path: string, body?: unknown) =>
        rest(url, KEY, method, path, body);
      const shop = uniqueName("shop");
      const blog = uniqueName("blog");
      const probes: Record<string, string> = {};
      for (const project of [shop, blog]) {
        assert.equal((await admin("POST", "/projects", { project })).status, 201);
        const made = await admin("POST", `/projects/${project}/probes`, {
          url: `http://127.0.0.1:9/${project}`,
        });
        assert.equal(made.status, 201, JSON.stringify(made.body));
        probes[project] = (made.body!.data as { probe_id: string }).probe_id;
      }
      const viewer = uniqueName("alice-viewer");
      const editor = uniqueName("bob-shop-editor");
      const used: Record<string, number> = {};
      let refusedAfterMs = -1;
      const report = await runBrowserScript<TeamReport>(
        BROWSER_SCRIPT,
        {
          chromium: CHROMIUM,
          baseUrl: url,
          apiKey: KEY,
          viewer,
          editor,
          project: shop,
          otherProject: blog,
          shotDir: places.shotDir,
        } satisfies TeamArgs,
        {
          answer: async (question) => {
            if (question.use) {
              const keys = question.use as { viewer: string; editor: string };
              const as = (key: string, method: string, path: string, body?: unknown) =>
                rest(url, key, method, path, body).then((r) => r.status);
              const shopProbe = `/projects/${shop}/probes/${probes[shop]}`;
              const blogProbe = `/projects/${blog}/probes/${probes[blog]}`;
              used["viewer reads"] = await as(keys.viewer, "GET", shopProbe);
              used["viewer reads the other"] = await as(keys.viewer, "GET", blogProbe);
              used["viewer changes"] = await as(keys.viewer, "PATCH", shopProbe, { latency: 900 });
              used["editor changes"] = await as(keys.editor, "PATCH", shopProbe, { latency: 900 });
              used["editor changes the other"] = await as(keys.editor, "PATCH", blogProbe, {
                latency: 900,
              });
              used["editor reads the other"] = await as(keys.editor, "GET", `/projects/${blog}`);
              used["editor creates a project"] = await as(keys.editor, "POST", "/projects", {
                project: uniqueName("new"),
              });
              const listed = await rest(url, keys.editor, "GET", "/projects");
              used["editor's projects"] = (listed.body!.data as { project: string }[]).length;
              const listedProbes = await rest(url, keys.editor, "GET", "/probes");
              const probeProjects = (listedProbes.body!.data as { project: string }[])
                .map((p) => p.project);
              assert.deepEqual(
                (listed.body!.data as { project: string }[]).map((p) => p.project),
                [shop],
                "the editor's list of projects",
              );
              assert.deepEqual(probeProjects, [shop], "the editor's list of probes");
              return;
            }
            // Revoked from the page a moment ago: refused now, on its very next call.
            const revokedAt = Date.now();
            const after = await rest(url, question.revoked as string, "GET", "/projects");
            refusedAfterMs = Date.now() - revokedAt;
            used["viewer after the revoke"] = after.status;
            assert.ok(!JSON.stringify(after.body).includes(question.revoked as string));
          },
          deadlineMs: 180_000,
        },
      );
      console.log(`screenshots:\n  ${report.screenshots.join("\n  ")}`);

      // Each key copied is the one shown, and works as its role and scope say.
      for (const name of [viewer, editor]) {
        assert.equal(report.copied[name].copied, report.copied[name].shown);
        assert.ok(report.copied[name].copied.length >= 32, "a key, not its record");
      }
      assert.notEqual(report.copied[viewer].copied, report.copied[editor].copied);
      assert.deepEqual(used, {
        "viewer reads": 200,
        "viewer reads the other": 200,
        "viewer changes": 403,
        "editor changes": 200,
        "editor changes the other": 404,
        "editor reads the other": 404,
        "editor creates a project": 403,
        "editor's projects": 1,
        "viewer after the revoke": 401,
      });
      console.log(`the revoked key refused in ${refusedAfterMs} ms`);
      assert.deepEqual(report.editorProjects, [shop], "the editor's dashboard: its project alone");
      // The admin's pages are not offered to an editor.
      assert.ok(report.editorNav.includes("Overview"), report.editorNav.join());
      assert.ok(!report.editorNav.includes("API keys"), report.editorNav.join());
      assert.ok(!report.editorNav.includes("Audit log"), report.editorNav.join());
      // Nor is creating a project (refused to a key limited to projects); its menu says who it is.
      assert.ok(!report.editorNav.includes("New project"), report.editorNav.join());
      assert.ok(!report.editorLinks.includes("New project"), report.editorLinks.join());
      assert.match(report.editorMenu, new RegExp(`${editor} editor ${shop} Sign out$`));

      // The keys table: both made, then the viewer's row gone; no key in it.
      const rowOf = (rows: string[], name: string) => rows.find((r) => r.startsWith(name));
      assert.match(rowOf(report.rows, viewer) ?? "", / viewer all /);
      assert.match(rowOf(report.rows, editor) ?? "", new RegExp(` editor ${shop} `));
      assert.match(rowOf(report.rows, "SERVICE_API_KEY") ?? "", /configured admin all/);
      for (const key of Object.values(report.copied)) {
        assert.ok(!report.rows.some((r) => r.includes(key.copied)), "no key in the table");
      }
      assert.equal(rowOf(report.rowsAfterRevoke, viewer), undefined);
      assert.ok(rowOf(report.rowsAfterRevoke, editor));
      assert.match(report.revokedNote, new RegExp(`Key ${viewer} was revoked`));

      // Who did what: the editor's change under its key's name, the admin's under its session.
      const session = "key SERVICE_API_KEY";
      const ops = (rows: typeof report.audit) =>
        rows.map((r) => `${r.actor.split(" ").slice(0, -1).join(" ")}: ${r.operation}`);
      assert.deepEqual(ops(report.audit).slice(0, 4), [
        `${session}: apiKeys.delete`,
        `${editor}: probes.update`,
        `${session}: apiKeys.create`,
        `${session}: apiKeys.create`,
      ]);
      assert.deepEqual(ops(report.auditByEditor), [`${editor}: probes.update`]);
      const [change] = report.auditByEditor;
      assert.match(change.actor, / stored_key$/);
      assert.match(change.resource, new RegExp(`^probe ${shop}/${probes[shop]}$`));
      assert.match(change.change, /latency/);
      assert.deepEqual(ops(report.auditByAdmin), [
        `${session}: apiKeys.delete`,
        `${session}: apiKeys.create`,
        `${session}: apiKeys.create`,
      ]);
      assert.ok(report.auditByAdmin.every((r) => r.actor.endsWith(" session")));
      for (const key of Object.values(report.copied)) {
        assert.ok(!JSON.stringify(report.audit).includes(key.copied), "no key in the audit log");
      }

      assert.deepEqual(report.axe, [], "axe-core: no serious or critical violations");
      assert.deepEqual([report.csp, report.foreign, report.pageErrors], [[], [], []]);
      console.log(`the whole test took ${((Date.now() - began) / 1000).toFixed(1)} s`);
    } finally {
      await places.end(server);
    }
  },
});
