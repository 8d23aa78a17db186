/**
 * The CLI's `overview`, `results series`, `status-page`, `badges` and `whoami` run in-process
 * against a real app: the CLI's fetch hands each request to the app's handler, and runs are made
 * by `probes run` against a local target. Every case runs on PGlite and, with TEST_DATABASE_URL,
 * on PostgreSQL.
 */
import assert from "node:assert/strict";
import { createApp } from "../server/app.ts";
import { createLogger } from "../server/base/log.ts";
import { SERVICE_VERSION } from "../server/base/version.ts";
import {
  apiSuite,
  backends,
  BASE,
  freshDatabase,
  TEST_API_KEY,
  TEST_READ_KEY,
  type TestContext,
  uniqueName,
} from "../server/testing/app.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { EXIT } from "./exit_codes.ts";
import { expectExit, runCliOn } from "./testing.ts";

/** Runs the CLI against the app's handler, with the write key unless `env` says otherwise. */
const cli = ({ app }: Pick<TestContext, "app">, args: string[], env: Record<string, string> = {}) =>
  runCliOn(app, args, { env });
const expect = expectExit;

/** GETs a path of the app without a key, as a browser or an image cache would. */
async function open({ app }: Pick<TestContext, "app">, pathOrUrl: string) {
  const answer = await app.handler(new Request(new URL(pathOrUrl, BASE)));
  return {
    status: answer.status,
    type: answer.headers.get("content-type"),
    text: await answer.text(),
  };
}

/** The cells of the first table line with a cell `cell` (the first cell unless `anywhere`). */
function rowOf(text: string, cell: string, anywhere = false): string[] {
  const rows = text.split("\n").map((line) => line.split(/ {2,}/));
  const row = rows.find((cells) => anywhere ? cells.includes(cell) : cells[0] === cell);
  assert.ok(row, `no line with ${cell} in:\n${text}`);
  return row;
}

apiSuite("CLI: overview, series, status pages, badges, whoami", (test) => {
  test("overview and results series after real runs: tables, --json, bad input", async (t) => {
    const target = await startTarget();
    try {
      const project = uniqueName();
      expect(await cli(t, ["projects", "create", project, "--label", "Shop"]), 0);
      expect(
        await cli(t, [
          "alerts",
          "set",
          "--project",
          project,
          "--failure-threshold",
          "1",
          "--success-threshold",
          "1",
        ]),
        0,
      );
      const create = async (args: string[]) =>
        expect(await cli(t, ["--json", "probes", "create", project, ...args]), 0).json().data
          .probe_id as string;
      const healthy = await create([`${target.origin}/health`, "--label", "Health"]);
      const broken = await create([`${target.origin}/status/503`, "--label", "Checkout"]);
      const idle = await create(["https://idle.example/"]);
      expect(await cli(t, ["probes", "run", project, healthy]), 0);
      expect(await cli(t, ["probes", "run", project, broken]), 0);

      const table = expect(await cli(t, ["overview", "--project", project]), 0);
      assert.deepEqual(table.calls, ["GET /trpc/overview.get"]);
      const lines = table.stdout.split("\n");
      assert.match(
        lines[0],
        /^PROJECT +PROBE_ID +NAME +STATE +SINCE +UPTIME_24H +UPTIME_7D +UPTIME_30D +P95_24H_MS +LAST_RUN_AT$/,
      );
      // Down first, then unknown, then up: the service's order, kept.
      assert.deepEqual(
        lines.slice(1, 4).map((l) => l.split(/ {2,}/).slice(0, 4)),
        [
          [project, broken, "Checkout", "down"],
          [project, idle, "https://idle.example/", "unknown"],
          [project, healthy, "Health", "up"],
        ],
      );
      const up = rowOf(table.stdout, healthy, true);
      assert.deepEqual(up.slice(5, 8), ["100.00%", "100.00%", "100.00%"]);
      assert.match(up[8], /^\d+$/, "p95 in ms");
      assert.match(up[9], /^\d{4}-\d\d-\d\dT/);
      const down = rowOf(table.stdout, broken, true);
      assert.equal(down[5], "0.00%");
      const idleRow = rowOf(table.stdout, idle, true);
      assert.deepEqual(idleRow.slice(4), ["-", "-", "-", "-", "-", "-"]);
      assert.match(table.stdout, /^INCIDENT +PROJECT +LABEL +STARTED_AT +CAUSE +ACKNOWLEDGED$/m);
      assert.match(
        table.stdout,
        new RegExp(
          `^\\d+ +${project} +Checkout +\\S+ +answered HTTP 503, expected a status below 400 +no$`,
          "m",
        ),
      );
      assert.match(table.stdout, /^1 project, 3 probes, 1 open incident, at \d{4}-.*Z\.$/m);

      const json = expect(await cli(t, ["--json", "overview", "--project", project]), 0).json();
      assert.deepEqual(json.meta.projects, 1);
      assert.deepEqual(json.meta.probes, 3);
      assert.deepEqual(
        json.data.projects[0].probes.map((p: { probe_id: string }) => p.probe_id),
        [broken, idle, healthy],
      );
      assert.equal(json.data.projects[0].probes[2].sparkline.length, 24);
      assert.deepEqual(
        json.data.incidents.map((i: { probe_id: string; state: string }) => [i.probe_id, i.state]),
        [[broken, "open"]],
      );

      // Every project: ours among them; a project without probes and a disabled one say so.
      const empty = uniqueName();
      expect(await cli(t, ["projects", "create", empty]), 0);
      expect(await cli(t, ["projects", "update", empty, "--status", "disabled"]), 0);
      const all = expect(await cli(t, ["overview"]), 0).stdout;
      assert.match(all, new RegExp(`^${project} +${broken} +Checkout +down`, "m"));
      assert.match(all, new RegExp(`^${empty} \\(disabled\\) +- +\\(no probes\\)( +-){7}$`, "m"));
      const none = expect(await cli(t, ["overview", "--project", empty]), 0).stdout;
      assert.match(none, /^No open incidents\.$/m);
      assert.match(none, /^1 project, 0 probes, 0 open incidents, at /m);

      const missing = expect(await cli(t, ["overview", "--project", uniqueName("gone")]), 4);
      assert.match(missing.stderr, /^error: Project not found \(not_found, HTTP 404\)$/m);
      const missingJson = expect(
        await cli(t, ["--json", "overview", "--project", uniqueName("gone")]),
        EXIT.notFound,
      );
      assert.equal(JSON.parse(missingJson.stderr).error.code, "not_found");

      // The series: the bucket that holds the run, and a line for the empty ones.
      const series = expect(await cli(t, ["results", "series", project, healthy]), 0);
      assert.deepEqual(series.calls, ["GET /trpc/results.series"]);
      assert.match(series.stdout, /^window +24h$/m);
      assert.match(series.stdout, /^bucket_seconds +300$/m);
      assert.match(series.stdout, /^percentiles +exact$/m);
      assert.match(series.stdout, /^buckets +288$/m);
      assert.match(
        series.stdout,
        /^START +RUNS +UP +DEGRADED +DOWN +BLOCKED +MAINTENANCE +UPTIME +P50_MS +P95_MS +MAX_MS$/m,
      );
      const bucket = series.stdout.split("\n").filter((l) => /^\d{4}-/.test(l));
      assert.equal(bucket.length, 1);
      assert.deepEqual(bucket[0].split(/ {2,}/).slice(1, 8), [
        "1",
        "1",
        "0",
        "0",
        "0",
        "0",
        "100.00%",
      ]);
      assert.match(series.stdout, /^287 of 288 buckets without runs not shown\.$/m);
      const failed = expect(await cli(t, ["results", "series", project, broken]), 0).stdout;
      assert.match(failed, /^\S+Z +1 +0 +0 +1 +0 +0 +0\.00%/m);
      const quiet = expect(
        await cli(t, ["results", "series", project, idle, "--window", "90d"]),
        0,
      );
      assert.match(quiet.stdout, /^No runs in this window\.$/m);

      const week = expect(
        await cli(t, ["--json", "results", "series", project, healthy, "--window", "7d"]),
        0,
      ).json();
      assert.equal(week.data.window, "7d");
      assert.equal(week.data.bucket_seconds, 3600);
      assert.equal(week.data.buckets.length, 168, "--json has every bucket, empty ones too");
      assert.equal(week.data.percentiles, "estimated");
      const hour = expect(
        await cli(t, ["results", "series", project, healthy, "--window", "1h"]),
        0,
      );
      assert.match(hour.stdout, /^bucket_seconds +60$/m);
      assert.match(hour.stdout, /^history_since +\d{4}-\d\d-\d\dT/m);

      const badWindow = expect(
        await cli(t, ["results", "series", project, healthy, "--window", "2h"]),
        EXIT.usage,
      );
      assert.match(badWindow.stderr, /Allowed choices are 1h, 6h, 24h, 7d, 30d, 90d/);
      assert.deepEqual(badWindow.calls, [], "refused before any call");
      const ghost = expect(
        await cli(t, ["results", "series", project, "0000000000000000"]),
        EXIT.notFound,
      );
      assert.match(ghost.stderr, /Probe not found/);
    } finally {
      await target.close();
    }
  });

  test("status-page get and set: settings, the address, and the page it opens", async (t) => {
    const project = uniqueName();
    expect(await cli(t, ["projects", "create", project, "--label", "Web shop"]), 0);

    const first = expect(await cli(t, ["status-page", "get", project]), 0).stdout;
    assert.match(first, /^public +false$/m);
    assert.match(first, /^title +-$/m);
    assert.match(first, new RegExp(`^page_url +${BASE}/status/${project}$`, "m"));
    assert.match(first, new RegExp(`^json_url +${BASE}/status/${project}/status\\.json$`, "m"));
    assert.match(
      first,
      new RegExp(`^Private: .* answers 404 .*status-page set ${project} --public`, "m"),
    );
    assert.equal((await open(t, `/status/${project}`)).status, 404);

    const set = expect(
      await cli(t, [
        "status-page",
        "set",
        project,
        "--public",
        "--title",
        "Shop status",
        "--description",
        "The web shop and its API.",
        "--show-urls",
      ]),
      0,
    );
    assert.deepEqual(set.calls, ["POST /trpc/statusPages.update"]);
    assert.match(set.stdout, /^public +true$/m);
    assert.match(set.stdout, /^title +Shop status$/m);
    assert.match(set.stdout, /^show_urls +true$/m);
    assert.match(
      set.stdout,
      new RegExp(`^Public: anyone can open ${BASE}/status/${project}$`, "m"),
    );
    const pageUrl = rowOf(set.stdout, "page_url")[1];
    const page = await open(t, pageUrl);
    assert.equal(page.status, 200, "the printed address is the page");
    assert.match(page.text, /Shop status/);
    assert.equal((await open(t, rowOf(set.stdout, "json_url")[1])).status, 200);

    // --no-title puts the default back (null); --no-public hides the page; the rest stay.
    const back = expect(
      await cli(t, ["--json", "status-page", "set", project, "--no-title", "--no-public"]),
      0,
    ).json();
    assert.equal(back.data.title, null);
    assert.equal(back.data.public, false);
    assert.equal(back.data.description, "The web shop and its API.");
    assert.equal(back.data.show_urls, true);
    assert.equal((await open(t, `/status/${project}`)).status, 404);
    const got = expect(await cli(t, ["--json", "status-page", "get", project]), 0).json();
    assert.deepEqual(got.data, back.data);

    // --probes names the probes shown, in order; --no-probes shows every probe again.
    const one = expect(
      await cli(t, ["--json", "probes", "create", project, "https://a.example.com/"]),
      0,
    ).json().data.probe_id;
    const chosen = expect(
      await cli(t, ["--json", "status-page", "set", project, "--probes", one]),
      0,
    ).json();
    assert.deepEqual(chosen.data.probe_ids, [one]);
    const shown = expect(await cli(t, ["status-page", "get", project]), 0).stdout;
    assert.match(shown, new RegExp(`^probes +${one}$`, "m"));
    const unknown = await cli(t, ["status-page", "set", project, "--probes", "0123456789abcdef"]);
    assert.equal(unknown.code, 6, unknown.stderr);
    const all = expect(await cli(t, ["--json", "status-page", "set", project, "--no-probes"]), 0)
      .json();
    assert.equal(all.data.probe_ids, null);

    const proxied = expect(
      await cli(t, ["status-page", "get", project, "--origin", "https://status.example.com/"]),
      0,
    ).stdout;
    assert.match(
      proxied,
      new RegExp(`^page_url +https://status\\.example\\.com/status/${project}$`, "m"),
    );

    const noFields = expect(await cli(t, ["status-page", "set", project]), EXIT.invalid);
    assert.match(noFields.stderr, /No fields were provided/);
    const blank = expect(await cli(t, ["status-page", "set", project, "--title", "  "]), 6);
    assert.match(blank.stderr, /^ {2}title: /m);
    const badOrigin = expect(
      await cli(t, ["status-page", "get", project, "--origin", "status.example.com"]),
      EXIT.usage,
    );
    assert.match(badOrigin.stderr, /Not an http\(s\) URL/);
    assert.deepEqual(badOrigin.calls, []);
    expect(await cli(t, ["status-page", "get", uniqueName("gone")]), EXIT.notFound);
    expect(await cli(t, ["status-page", "set", uniqueName("gone"), "--public"]), EXIT.notFound);
  });

  test("badges: create prints URLs that serve, list --json has the tokens, rotate, delete", async (t) => {
    const project = uniqueName();
    expect(await cli(t, ["projects", "create", project]), 0);
    const probe = expect(
      await cli(t, ["--json", "probes", "create", project, "https://badge.example/health"]),
      0,
    ).json().data.probe_id as string;

    const made = expect(await cli(t, ["badges", "create", project]), 0).stdout;
    const token = made.match(/shows it again; badges rotate makes a new one\): (\S+)$/m)?.[1];
    assert.ok(token && token.length === 43, made);
    assert.match(made, new RegExp(`^Created badge \\d+ for project ${project}\\.$`, "m"));
    const status = rowOf(made, "status")[1];
    assert.equal(status, `${BASE}/badge/${token}/status.svg`);
    assert.equal(rowOf(made, "uptime")[1], `${BASE}/badge/${token}/uptime.svg?window=24h`);
    assert.equal(rowOf(made, "latency")[1], `${BASE}/badge/${token}/latency.svg?window=24h`);
    const json = rowOf(made, "json")[1];
    assert.equal(json, `${BASE}/badge/${token}.json`);
    assert.equal(
      rowOf(made, "shields")[1],
      `https://img.shields.io/endpoint?url=${encodeURIComponent(json)}`,
    );
    assert.match(made, new RegExp(`^!\\[status\\]\\(${BASE}/badge/${token}/status\\.svg\\)$`, "m"));
    // What was printed serves: an SVG and Shields' JSON.
    for (const url of [status, rowOf(made, "uptime")[1], rowOf(made, "latency")[1]]) {
      const svg = await open(t, url);
      assert.equal(svg.status, 200, url);
      assert.match(svg.type ?? "", /image\/svg\+xml/);
    }
    const shields = await open(t, json);
    assert.equal(shields.status, 200);
    assert.equal(JSON.parse(shields.text).schemaVersion, 1);

    const forProbe = expect(await cli(t, ["--json", "badges", "create", project, probe]), 0).json();
    assert.equal(forProbe.data.scope, "probe");
    assert.equal(forProbe.data.probe_id, probe);
    assert.equal(forProbe.data.token.length, 43);
    assert.equal(forProbe.data.urls.status_svg, `/badge/${forProbe.data.token}/status.svg`);
    const origin = expect(
      await cli(t, ["badges", "create", project, probe, "--origin", "https://mon.example.com"]),
      0,
    ).stdout;
    assert.match(
      rowOf(origin, "status")[1],
      /^https:\/\/mon\.example\.com\/badge\/\S{43}\/status\.svg$/,
    );

    const listed = expect(await cli(t, ["badges", "list", project]), 0).stdout;
    assert.match(listed, /^ID +SCOPE +PROBE_ID +CREATED_AT +ROTATED_AT$/m);
    assert.equal(listed.split("\n").filter((l) => /^\d+ /.test(l)).length, 3);
    assert.match(listed, new RegExp(`^\\d+ +probe +${probe} +\\S+ +-$`, "m"));
    assert.match(listed, /badges list --json holds each token and its URLs/);
    const listedJson = expect(await cli(t, ["--json", "badges", "list", project]), 0).json();
    assert.equal(listedJson.meta.count, 3);
    const [projectBadge] = listedJson.data;
    assert.equal(projectBadge.scope, "project");
    assert.equal(projectBadge.token, token, "the token made first, again");

    const rotated = expect(await cli(t, ["badges", "rotate", project, projectBadge.id]), 0).stdout;
    assert.match(
      rotated,
      new RegExp(`^Rotated badge ${projectBadge.id} for project ${project}\\.$`, "m"),
    );
    const newStatus = rowOf(rotated, "status")[1];
    assert.notEqual(newStatus, status);
    assert.equal((await open(t, status)).status, 404, "the old token stops at once");
    assert.equal((await open(t, newStatus)).status, 200);

    const deleted = expect(await cli(t, ["badges", "delete", project, projectBadge.id]), 0);
    assert.equal(
      deleted.stdout,
      `Deleted badge ${projectBadge.id} of ${project}: its URLs no longer serve.\n`,
    );
    assert.equal((await open(t, newStatus)).status, 404);
    const deletedJson = expect(
      await cli(t, ["--json", "badges", "delete", project, listedJson.data[1].id]),
      0,
    ).json();
    assert.deepEqual(deletedJson, {
      data: { project, id: listedJson.data[1].id, deleted: true },
    });
    assert.equal(
      expect(await cli(t, ["--json", "badges", "list", project]), 0).json().meta.count,
      1,
    );

    const notAProbe = expect(
      await cli(t, ["badges", "create", project, "0000000000000000"]),
      EXIT.invalid,
    );
    assert.match(notAProbe.stderr, /^ {2}probe_id: /m);
    expect(await cli(t, ["badges", "rotate", project, projectBadge.id]), EXIT.notFound);
    expect(await cli(t, ["badges", "delete", project, projectBadge.id]), EXIT.notFound);
    expect(await cli(t, ["badges", "list", uniqueName("gone")]), EXIT.notFound);
    const extra = expect(await cli(t, ["badges", "create", project, probe, "more"]), EXIT.usage);
    assert.deepEqual(extra.calls, []);
    const empty = uniqueName();
    expect(await cli(t, ["projects", "create", empty]), 0);
    assert.equal(expect(await cli(t, ["badges", "list", empty]), 0).stdout, "No badges.\n");
  });
});

for (const backend of backends()) {
  Deno.test(`CLI: whoami with a write key, a read-only key and a wrong key [${backend}]`, async () => {
    const app = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      config: { readOnlyApiKeys: [TEST_READ_KEY] },
      log: createLogger("silent"),
    });
    try {
      const writer = expect(await cli({ app }, ["whoami"]), 0);
      assert.deepEqual(writer.calls, ["GET /trpc/whoami.get"]);
      assert.match(writer.stdout, /^scope +write$/m);
      assert.match(writer.stdout, /^name +SERVICE_API_KEY$/m);
      assert.match(writer.stdout, /^role +admin$/m);
      assert.match(writer.stdout, /^projects +every project$/m);
      assert.match(writer.stdout, new RegExp(`^service +${BASE}$`, "m"));
      assert.match(writer.stdout, /^This key may read and change everything\.$/m);
      // With the service's version and database, as the dashboard's Settings page shows them.
      const service = {
        version: SERVICE_VERSION,
        database: backend === "pglite" ? "embedded" : "postgresql",
      };
      assert.match(writer.stdout, new RegExp(`^version +${SERVICE_VERSION}$`, "m"));
      assert.match(writer.stdout, new RegExp(`^database +${service.database}$`, "m"));
      assert.deepEqual(expect(await cli({ app }, ["--json", "whoami"]), 0).json(), {
        data: {
          name: "SERVICE_API_KEY",
          role: "admin",
          projects: null,
          scope: "write",
          ...service,
        },
      });

      const reader = { SERVICE_API_KEY: TEST_READ_KEY };
      const read = expect(await cli({ app }, ["whoami"], reader), 0);
      assert.match(read.stdout, /^scope +read$/m);
      assert.match(read.stdout, /^role +viewer$/m);
      assert.match(read.stdout, /may only read .*SERVICE_API_KEYS_READONLY.*403/);
      assert.deepEqual(expect(await cli({ app }, ["whoami", "--json"], reader), 0).json(), {
        data: {
          name: "SERVICE_API_KEYS_READONLY",
          role: "viewer",
          projects: null,
          scope: "read",
          ...service,
        },
      });
      // A change with a read-only key: refused (403), told apart from a failure of the CLI.
      const refused = expect(
        await cli({ app }, ["projects", "create", "ro-made"], reader),
        EXIT.unauthorized,
      );
      assert.match(refused.stderr, /may only read/);
      assert.equal(
        expect(await cli({ app }, ["projects", "get", "ro-made"]), EXIT.notFound).code,
        4,
      );

      const wrong = expect(
        await cli({ app }, ["whoami"], { SERVICE_API_KEY: "wrong-key-0123456789" }),
        EXIT.unauthorized,
      );
      assert.match(wrong.stderr, /\(unauthorized, HTTP 401\)/);
      assert.ok(!wrong.stderr.includes("wrong-key-0123456789"), "the key is not repeated");
      const noKey = expect(
        await cli({ app }, ["whoami"], { SERVICE_API_KEY: "" }),
        EXIT.unauthorized,
      );
      assert.match(noKey.stderr, /No API key/);
      assert.deepEqual(noKey.calls, []);
    } finally {
      await app.close();
    }
  });
}
