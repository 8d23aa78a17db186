/**
 * Badge tokens through the REST API, and the badges they serve without a key: SVGs that are
 * well-formed XML with the expected text, Shields' endpoint JSON, tokens that are listed again,
 * looked up by their digests, and stop when rotated or deleted.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { MAX_BADGES_PER_PROJECT, shieldsEndpoint } from "@probe/shared";
import { apiSuite, BASE, type TestClient, type TestContext, uniqueName } from "../testing/app.ts";
import { startTarget, type Target } from "../testing/target_server.ts";
import { insertRuns, type Run } from "../runner/store.ts";
import { createBadges } from "./badges.ts";
import { PUBLIC_CACHE_MS } from "./status_page.ts";

const anonymous = { key: null };
const badgesPath = (project: string) => `/api/v1/projects/${project}/badges`;

/**
 * Reads XML 1.0 strictly enough for SVG: one root, elements that nest and close, quoted and
 * unique attributes, `&` only in the five named references or character references. Answers the
 * root's name and every text node (decoded), or throws where the document is not well-formed.
 */
function parseXml(xml: string): { root: string; texts: string[] } {
  const NAME = /[A-Za-z_:][A-Za-z0-9_.:-]*/y;
  const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
  const decode = (raw: string) =>
    raw.replace(/&([^;&]*);?/g, (ref, body: string) => {
      if (!ref.endsWith(";")) throw new Error(`a bare & in "${raw}"`);
      if (body in ENTITIES) return ENTITIES[body];
      const code = /^#x[0-9A-Fa-f]+$/.test(body)
        ? parseInt(body.slice(2), 16)
        : /^#[0-9]+$/.test(body)
        ? parseInt(body.slice(1), 10)
        : NaN;
      if (Number.isNaN(code)) throw new Error(`an unknown reference ${ref}`);
      return String.fromCodePoint(code);
    });
  const nameAt = (at: number) => {
    NAME.lastIndex = at;
    const m = NAME.exec(xml);
    if (!m) throw new Error(`a name expected at ${at}`);
    return m[0];
  };
  const stack: string[] = [];
  const texts: string[] = [];
  let root: string | null = null;
  let i = 0;
  if (xml.startsWith("<?xml")) i = xml.indexOf("?>") + 2;
  while (i < xml.length) {
    if (xml.startsWith("<!--", i)) {
      const end = xml.indexOf("-->", i);
      if (end < 0) throw new Error("an unclosed comment");
      i = end + 3;
    } else if (xml.startsWith("</", i)) {
      const name = nameAt(i + 2);
      i += 2 + name.length;
      while (/\s/.test(xml[i])) i++;
      if (xml[i] !== ">") throw new Error(`> expected at ${i}`);
      if (stack.pop() !== name) throw new Error(`</${name}> closes nothing open`);
      i++;
    } else if (xml[i] === "<") {
      const name = nameAt(i + 1);
      if (root === null) root = name;
      else if (stack.length === 0) throw new Error("a second root element");
      i += 1 + name.length;
      const seen = new Set<string>();
      for (;;) {
        const before = i;
        while (/\s/.test(xml[i] ?? "")) i++;
        if (xml.startsWith("/>", i)) {
          i += 2;
          break;
        }
        if (xml[i] === ">") {
          stack.push(name);
          i++;
          break;
        }
        if (i === before) throw new Error(`space expected before an attribute at ${i}`);
        const attribute = nameAt(i);
        if (seen.has(attribute)) throw new Error(`${attribute} given twice`);
        seen.add(attribute);
        i += attribute.length;
        if (xml[i] !== "=") throw new Error(`= expected at ${i}`);
        const quote = xml[i + 1];
        if (quote !== '"' && quote !== "'") throw new Error(`a quote expected at ${i + 1}`);
        const end = xml.indexOf(quote, i + 2);
        if (end < 0) throw new Error("an unclosed attribute value");
        const value = xml.slice(i + 2, end);
        if (value.includes("<")) throw new Error("< in an attribute value");
        decode(value);
        i = end + 1;
      }
    } else {
      const next = xml.indexOf("<", i);
      const text = xml.slice(i, next < 0 ? xml.length : next);
      if (stack.length === 0 && text.trim() !== "") throw new Error("text outside the root");
      if (text.trim() !== "") texts.push(decode(text));
      i = next < 0 ? xml.length : next;
    }
  }
  if (root === null) throw new Error("no root element");
  if (stack.length > 0) throw new Error(`<${stack.at(-1)}> is never closed`);
  return { root, texts };
}

Deno.test("the XML reader of these tests refuses what is not well-formed", () => {
  assert.deepEqual(parseXml('<svg a="1"><t>x &amp; y</t><g/></svg>'), {
    root: "svg",
    texts: ["x & y"],
  });
  for (
    const bad of [
      "<svg><t></svg>",
      "<svg></svg><svg></svg>",
      '<svg a="1" a="2"/>',
      "<svg a=1/>",
      "<svg>a & b</svg>",
      "<svg>&nbsp;</svg>",
      "<svg>",
      "text",
    ]
  ) {
    assert.throws(() => parseXml(bad), Error, bad);
  }
});

async function newProject(api: TestClient): Promise<string> {
  const project = uniqueName("bd");
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  return project;
}

async function newProbe({ api, app }: TestContext, project: string, url: string) {
  const res = await api.post(`/api/v1/projects/${project}/probes`, { url });
  assert.equal(res.status, 201, res.text);
  const probeId: string = res.body.data.probe_id;
  const row = await app.database.db.selectFrom("probes").select("key")
    .where("project", "=", project).where("probe_id", "=", probeId).executeTakeFirstOrThrow();
  return { probeId, key: String(row.key), path: `/api/v1/projects/${project}/probes/${probeId}` };
}

async function newBadge(api: TestClient, project: string, probeId?: string) {
  const res = await api.post(badgesPath(project), probeId ? { probe_id: probeId } : {});
  assert.equal(res.status, 201, res.text);
  return res.body.data as {
    id: string;
    token: string;
    urls: { status_svg: string; uptime_svg: string; latency_svg: string; json: string };
  };
}

/** A badge's SVG: 200, public caching, well-formed, and its text. */
async function svgTexts(api: TestClient, path: string): Promise<string[]> {
  const res = await api.get(path, anonymous);
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  assert.equal(res.headers.get("content-type"), "image/svg+xml; charset=utf-8");
  assert.equal(res.headers.get("cache-control"), "public, max-age=30");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(res.headers.get("content-security-policy"), "default-src 'none'");
  const { root, texts } = parseXml(res.text);
  assert.equal(root, "svg");
  assert.doesNotMatch(res.text, /<script/i);
  return texts;
}

async function endpointJson(api: TestClient, path: string) {
  const res = await api.get(path, anonymous);
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.equal(res.headers.get("cache-control"), "public, max-age=30");
  return shieldsEndpoint.strict().parse(res.body);
}

function run(key: string, at: number, outcome: "up" | "down", ms: number): Run {
  return {
    key,
    due: at,
    result: {
      startedAt: new Date(at),
      durationMs: ms,
      outcome,
      httpStatus: outcome === "up" ? 200 : 503,
      error: outcome === "up" ? null : "HTTP 503",
      address: "192.0.2.1",
    },
  };
}

/** A probe that is up (one passing manual run) with three more runs in the last day. */
async function upProbe(t: TestContext, project: string, target: Target) {
  const probe = await newProbe(t, project, `${target.origin}/health`);
  assert.equal((await t.api.post(`${probe.path}/run`)).body.data.outcome, "up");
  const now = Date.now();
  // Latencies: the manual run's few ms, then 100, 200 and 1500 ms (a 503 still has a latency).
  await insertRuns(t.app.database.db, "test", [
    run(probe.key, now - 3 * 3_600_000, "up", 100),
    run(probe.key, now - 2 * 3_600_000, "up", 200),
    run(probe.key, now - 3_600_000, "down", 1500),
  ]);
  return probe;
}

apiSuite("badges", (test) => {
  test("a probe's badges show its state, uptime and p95 latency, in SVG and Shields JSON", async (t) => {
    const { api } = t;
    const target = await startTarget();
    try {
      const project = await newProject(api);
      const probe = await upProbe(t, project, target);
      const badge = await newBadge(api, project, probe.probeId);
      assert.deepEqual(await svgTexts(api, badge.urls.status_svg), [
        "status: up",
        "status",
        "status",
        "status",
        "up",
        "up",
        "up",
      ]);
      const uptime = await svgTexts(api, badge.urls.uptime_svg);
      assert.equal(uptime[0], "uptime 24h: 75.00%");
      const latency = await svgTexts(api, badge.urls.latency_svg);
      assert.equal(latency[0], "latency p95 24h: 1.5 s");

      assert.deepEqual(await endpointJson(api, badge.urls.json), {
        schemaVersion: 1,
        label: "status",
        message: "up",
        color: "brightgreen",
      });
      assert.deepEqual(await endpointJson(api, `${badge.urls.json}?kind=uptime&window=7d`), {
        schemaVersion: 1,
        label: "uptime 7d",
        message: "75.00%",
        color: "red",
      });
      assert.deepEqual(await endpointJson(api, `${badge.urls.json}?kind=latency`), {
        schemaVersion: 1,
        label: "latency p95 24h",
        message: "1.5 s",
        color: "yellow",
      });
    } finally {
      await target.close();
    }
  });

  test("a project's badges show the worst state and all its probes' runs together", async (t) => {
    const { api } = t;
    const target = await startTarget();
    try {
      // No probe: nothing known.
      const empty = await newBadge(api, await newProject(api));
      assert.equal((await endpointJson(api, empty.urls.json)).message, "unknown");

      const project = await newProject(api);
      await upProbe(t, project, target);
      const failing = await newProbe(t, project, `${target.origin}/status/500`);
      for (let i = 0; i < 3; i++) await api.post(`${failing.path}/run`);
      assert.equal((await api.get(failing.path)).body.data.state, "down");

      const other = await newBadge(api, project);
      const status = await endpointJson(api, other.urls.json);
      assert.deepEqual(status, {
        schemaVersion: 1,
        label: "status",
        message: "down",
        color: "red",
      });
      // 3 of 4 runs of the first probe passed, none of the 3 of the second.
      const uptime = await endpointJson(api, `${other.urls.json}?kind=uptime`);
      assert.equal(uptime.message, "42.85%");

      // Mixed intervals: each run weighs its probe's interval. Six passing runs of a 10 s probe
      // and one failing run of a 60 s probe each stand for a minute: 50%, not 6 in 7.
      const mixed = await newProject(api);
      const often = await newProbe(t, mixed, `${target.origin}/often`);
      const seldom = await newProbe(t, mixed, `${target.origin}/seldom`);
      await api.patch(often.path, { interval_seconds: 10 });
      await api.patch(seldom.path, { interval_seconds: 60 });
      const at = Date.now() - 2 * 3_600_000;
      await insertRuns(t.app.database.db, "test", [
        ...Array.from({ length: 6 }, (_, i) => run(often.key, at + i * 10_000, "up", 10)),
        run(seldom.key, at, "down", 10),
      ]);
      const weighted = await endpointJson(
        api,
        `${(await newBadge(api, mixed)).urls.json}?kind=uptime`,
      );
      assert.equal(weighted.message, "50.00%");
      assert.deepEqual((await svgTexts(api, other.urls.status_svg))[0], "status: down");
    } finally {
      await target.close();
    }
  });

  test("a token is listed again with its badges' paths, looked up by its SHA-256 digest", async (t) => {
    const { api, app } = t;
    const project = await newProject(api);
    const probe = await newProbe(t, project, "https://shop.example/");
    const created = await api.post(badgesPath(project), { probe_id: probe.probeId });
    assert.equal(created.status, 201);
    const badge = created.body.data;
    const { token, urls } = badge;
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(token, "base64url").length, 32);
    assert.deepEqual(urls, {
      status_svg: `/badge/${token}/status.svg`,
      uptime_svg: `/badge/${token}/uptime.svg?window=24h`,
      latency_svg: `/badge/${token}/latency.svg?window=24h`,
      json: `/badge/${token}.json`,
    });
    assert.equal(badge.scope, "probe");
    assert.equal(badge.probe_id, probe.probeId);
    assert.equal(badge.rotated_at, null);
    const projectBadge = await newBadge(api, project);
    assert.notEqual(projectBadge.token, token);

    // Read later, each badge holds its token: its snippet can be copied again.
    const list = await api.get(badgesPath(project));
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, { data: [badge, projectBadge], meta: { count: 2 } });

    const rows = await app.database.db.selectFrom("badge_tokens").selectAll()
      .where("project", "=", project).orderBy("id").execute();
    assert.equal(rows[0].token_sha256, createHash("sha256").update(token).digest("hex"));
    assert.equal(rows[0].token, token);

    // A token made before tokens were kept has only its digest: listed without token or paths
    // (the dashboard says to rotate it once); it still serves its badges.
    await app.database.db.updateTable("badge_tokens").set({ token: null })
      .where("id", "=", rows[1].id).execute();
    const old = (await api.get(badgesPath(project))).body.data[1];
    assert.deepEqual([old.id, old.token, old.urls], [projectBadge.id, null, null]);
    assert.equal((await api.get(projectBadge.urls.status_svg, anonymous)).status, 200);
    const rotated = await api.post(`${badgesPath(project)}/${projectBadge.id}/rotate`);
    assert.equal(rotated.status, 200, rotated.text);
    assert.deepEqual((await api.get(badgesPath(project))).body.data[1], rotated.body.data);
  });

  test("rotating gives a new token and the old one stops at once; deleting stops it too", async (t) => {
    const { api } = t;
    const project = await newProject(api);
    const badge = await newBadge(api, project);
    assert.equal((await api.get(badge.urls.status_svg, anonymous)).status, 200);
    const rotated = await api.post(`${badgesPath(project)}/${badge.id}/rotate`);
    assert.equal(rotated.status, 200, rotated.text);
    const fresh = rotated.body.data;
    assert.equal(fresh.id, badge.id);
    assert.notEqual(fresh.token, badge.token);
    assert.equal(typeof fresh.rotated_at, "string");
    for (const path of Object.values(badge.urls)) {
      assert.equal((await api.get(path, anonymous)).status, 404, path);
    }
    for (const path of Object.values(fresh.urls) as string[]) {
      assert.equal((await api.get(path, anonymous)).status, 200, path);
    }
    assert.equal((await api.get(badgesPath(project))).body.data[0].rotated_at, fresh.rotated_at);
    // Rotating takes no input: `{}` or nothing, never fields.
    const extra = await api.post(`${badgesPath(project)}/${badge.id}/rotate`, { token: "x" });
    assert.equal(extra.status, 422);
    assert.equal((await api.get(fresh.urls.status_svg, anonymous)).status, 200);

    const deleted = await api.delete(`${badgesPath(project)}/${badge.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, "");
    assert.equal((await api.get(fresh.urls.status_svg, anonymous)).status, 404);
    assert.equal((await api.delete(`${badgesPath(project)}/${badge.id}`)).status, 404);
    assert.deepEqual((await api.get(badgesPath(project))).body, { data: [], meta: { count: 0 } });
  });

  test("an unknown or malformed token is a 404 like any unknown path", async ({ api }) => {
    const unknown = await api.get("/no/such/path", anonymous);
    const made = "A".repeat(43);
    for (
      const path of [
        `/badge/${made}/status.svg`,
        `/badge/${made}.json`,
        "/badge/short/status.svg",
        `/badge/${made}/other.svg`,
        `/badge/${made}/status.png`,
        "/badge/",
      ]
    ) {
      const res = await api.get(path, anonymous);
      assert.equal(res.status, 404, path);
      assert.equal(res.text, unknown.text);
      assert.deepEqual([...res.headers], [...unknown.headers]);
    }
  });

  test("a badge's window is 24h, 7d or 30d; anything else is a 422 naming it", async ({ api }) => {
    const project = await newProject(api);
    const { token } = await newBadge(api, project);
    for (const window of ["24h", "7d", "30d"]) {
      const texts = await svgTexts(api, `/badge/${token}/uptime.svg?window=${window}`);
      assert.equal(texts[0], `uptime ${window}: no data`);
    }
    assert.equal((await svgTexts(api, `/badge/${token}/uptime.svg`))[0], "uptime 24h: no data");
    assert.equal(
      (await svgTexts(api, `/badge/${token}/latency.svg?window=30d`))[0],
      "latency p95 30d: no data",
    );
    // A status badge has no window: one sent is ignored.
    assert.equal(
      (await svgTexts(api, `/badge/${token}/status.svg?window=1y`))[0],
      "status: unknown",
    );
    for (
      const [path, field] of [
        [`/badge/${token}/uptime.svg?window=90d`, "window"],
        [`/badge/${token}/latency.svg?window=24h&window=7d`, "window"],
        [`/badge/${token}.json?kind=uptime&window=1h`, "window"],
        [`/badge/${token}.json?kind=speed`, "kind"],
      ]
    ) {
      const res = await api.get(path, anonymous);
      assert.equal(res.status, 422, path);
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.equal(res.body.error.code, "validation_failed");
      assert.equal(res.body.error.details[0].path, field);
    }
  });

  test("HEAD answers a badge's headers without its body", async ({ api }) => {
    const project = await newProject(api);
    const badge = await newBadge(api, project);
    const head = await api.call("HEAD", badge.urls.status_svg, anonymous);
    assert.equal(head.status, 200);
    assert.equal(head.text, "");
    assert.equal(head.headers.get("content-type"), "image/svg+xml; charset=utf-8");
    assert.equal(head.headers.get("cache-control"), "public, max-age=30");
  });

  test("making, rotating and deleting badges: the API's refusals", async (t) => {
    const { api } = t;
    const project = await newProject(api);
    const missing = uniqueName("none");
    assert.equal((await api.get(badgesPath(missing))).status, 404);
    assert.equal((await api.get(badgesPath(missing))).body.error.message, "Project not found");
    assert.equal((await api.post(badgesPath(missing), {})).status, 404);

    const noProbe = await api.post(badgesPath(project), { probe_id: "0123456789abcdef" });
    assert.equal(noProbe.status, 422);
    assert.deepEqual(noProbe.body.error.details, [
      { path: "probe_id", message: "is not a probe of this project" },
    ]);
    const unknownField = await api.post(badgesPath(project), { scope: "project" });
    assert.equal(unknownField.status, 422);
    assert.equal(unknownField.body.error.details[0].path, "scope");
    const wrongType = await api.post(badgesPath(project), { probe_id: 5 });
    assert.equal(wrongType.status, 422);
    assert.equal(wrongType.body.error.details[0].path, "probe_id");
    assert.deepEqual((await api.get(badgesPath(project))).body.data, []);

    for (const id of ["999999", "abc", "0", "99999999999999999999"]) {
      for (
        const res of [
          await api.post(`${badgesPath(project)}/${id}/rotate`),
          await api.delete(`${badgesPath(project)}/${id}`),
        ]
      ) {
        assert.equal(res.status, 404, id);
        assert.equal(res.body.error.message, "Badge not found");
      }
    }
    // A badge of another project is not this project's.
    const other = await newProject(api);
    const theirs = await newBadge(api, other);
    assert.equal((await api.post(`${badgesPath(project)}/${theirs.id}/rotate`)).status, 404);
    assert.equal((await api.delete(`${badgesPath(project)}/${theirs.id}`)).status, 404);
    assert.equal((await api.get(theirs.urls.status_svg, anonymous)).status, 200);
  });

  test(`a project holds at most ${MAX_BADGES_PER_PROJECT} badge tokens`, async ({ api }) => {
    const project = await newProject(api);
    for (let i = 0; i < MAX_BADGES_PER_PROJECT; i++) await newBadge(api, project);
    const refused = await api.post(badgesPath(project), {});
    assert.equal(refused.status, 409);
    assert.equal(
      refused.body.error.message,
      `A project holds at most ${MAX_BADGES_PER_PROJECT} badge tokens`,
    );
    assert.equal((await api.get(badgesPath(project))).body.meta.count, MAX_BADGES_PER_PROJECT);
  });

  test("deleting a probe or its project deletes its badge tokens", async (t) => {
    const { api } = t;
    const project = await newProject(api);
    const probe = await newProbe(t, project, "https://shop.example/a");
    const probeBadge = await newBadge(api, project, probe.probeId);
    const projectBadge = await newBadge(api, project);
    assert.equal((await api.delete(probe.path)).status, 204);
    const left = (await api.get(badgesPath(project))).body.data;
    assert.deepEqual(left.map((b: { id: string }) => b.id), [projectBadge.id]);
    assert.equal((await api.get(probeBadge.urls.json, anonymous)).status, 404);
    assert.equal((await api.delete(`/api/v1/projects/${project}`)).status, 200);
    assert.equal((await api.get(projectBadge.urls.json, anonymous)).status, 404);
  });

  test("a badge's figures are read once per period", async (t) => {
    const { api, app } = t;
    let now = Date.now();
    const badges = createBadges({ db: app.database.db, now: () => now });
    const get = async (path: string) => {
      const url = new URL(`${BASE}${path}`);
      return await (await badges(new Request(url), url))!.json();
    };
    const project = await newProject(api);
    const probe = await newProbe(t, project, "https://shop.example/b");
    const badge = await newBadge(api, project, probe.probeId);
    const path = `${badge.urls.json}?kind=uptime`;
    assert.equal((await get(path)).message, "no data");
    await insertRuns(app.database.db, "test", [run(probe.key, now - 60_000, "up", 10)]);
    assert.equal((await get(path)).message, "no data", "kept");
    now += PUBLIC_CACHE_MS + 1;
    assert.equal((await get(path)).message, "100%");
  });
});
