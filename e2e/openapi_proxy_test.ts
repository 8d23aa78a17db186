// The REST API through a validating proxy: Stoplight Prism (npm `@stoplight/prism-cli`, pinned
// below) in proxy mode in front of the running service checks every request and answer against
// the served OpenAPI document. For each operation the document lists (paths x methods, so a new
// operation is called without touching this file) the suite sends a success, a call without the
// key (401), calls on a missing project and probe where the path has them (404), invalid input
// (422: a NUL in each query parameter, a bad body field, a body that is not an object), and for
// operations with a body also a repeated key (422),
// malformed JSON (400), text/plain (415) and a body over 1 MiB (413), plus a duplicate project
// (409). Every breach found is collected; the test then fails with the
// whole list (operation, call, status, violation).
//
// Run: deno test -A e2e/openapi_proxy_test.ts
// Prism is run by Deno from npm; the first run installs it (about 200 packages, ~6 s) into
// $XDG_CACHE_HOME/probe-e2e/prism-<version> (default ~/.cache/...), later runs reuse that folder.
//
// Two Prism processes serve the same document:
// - "strict", with `--errors`, takes the calls that are valid by the document (successes, 404s,
//   409): Prism refuses a request the document does not allow and turns an answer with an
//   error-level violation into an error answer of its own (application/problem+json);
// - "lenient", without `--errors`, takes the calls that are invalid on purpose (no key, bad
//   input, wrong media type, too large): with `--errors` Prism would answer them itself and never
//   reach the service. Its request-side violations are the point of those calls and are ignored;
//   its answer-side violations count.
// On both, every entry of Prism's `sl-violations` answer header counts: Prism rates an
// undocumented status a warning only, which `--errors` does not turn into an error answer.
import assert from "node:assert/strict";
import { uniqueName } from "../server/testing/app.ts";
import { sparePort } from "../server/testing/cluster.ts";
import { startLiveServer } from "../server/testing/live.ts";

/** The Prism release this test runs (needs no Node: Deno runs it). */
export const PRISM_VERSION = "5.16.0";

const API = "/api/v1";
const PRISM_ERROR = "https://stoplight.io/prism/errors#";
const ONE_MIB = 1024 * 1024;

type Json = Record<string, unknown>;
type Via = "strict" | "lenient" | "direct";

interface Operation {
  key: string; // "GET /projects/{project}"
  method: string;
  path: string;
  queryParams: string[];
  hasBody: boolean;
  responses: Record<string, { content?: Record<string, unknown> }>;
}

/** One HTTP call of the suite. */
interface Call {
  op: Operation;
  label: string;
  /** Path values for the operation's template; missing ones come from the shared data. */
  params?: Record<string, string>;
  /** Query string, already encoded, without `?`. */
  query?: string;
  /** The body as sent (JSON bodies are stringified compactly, so Prism resends them as is). */
  body?: string;
  contentType?: string;
  key?: boolean;
  /** The status the call is built to get: another one means the suite missed its aim. */
  expect: number;
  via: Via;
}

interface Finding {
  op: string;
  label: string;
  status: number | null;
  problem: string;
}

// ---------------------------------------------------------------------------------------------
// Prism

interface Prism {
  url: string;
  output(): string;
  close(): Promise<void>;
}

function prismDir(): string {
  const cache = Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache`;
  return `${cache}/probe-e2e/prism-${PRISM_VERSION}`;
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
const stripAnsi = (s: string) => s.replace(ANSI, "");

/**
 * Starts `prism proxy` on a spare port. Deno runs the npm package; it needs a node_modules folder
 * of its own (`--node-modules-dir=auto`, in the cache folder): from Deno's global npm cache alone,
 * Prism 5.16.0 fails at start on fp-ts's `fp-ts/Either` sub-package entries (Cannot find module
 * .../fp-ts/lib/Either.js). `--no-config --no-lock`: the project's deno.json and deno.lock stay
 * out of it. Prism ignores the document's `servers` (`/api/v1`) unless a request names one with
 * `__server`: it matches the request path against the document's paths as they are and forwards
 * to upstream + path. So requests go to Prism as `/projects...` and the upstream is
 * `<service>/api/v1`; the document needs no rewriting.
 */
async function startPrism(document: string, upstream: string, errors: boolean): Promise<Prism> {
  const cwd = prismDir();
  await Deno.mkdir(cwd, { recursive: true });
  const port = sparePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-config",
      "--no-lock",
      "--node-modules-dir=auto",
      "--allow-read",
      "--allow-env",
      "--allow-sys",
      "--allow-net=127.0.0.1",
      `npm:@stoplight/prism-cli@${PRISM_VERSION}`,
      "proxy",
      document,
      upstream,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--multiprocess=false",
      ...(errors ? ["--errors"] : []),
    ],
    cwd,
    env: { NO_COLOR: "1", FORCE_COLOR: "0", NODE_ENV: "test" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const drain = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(new WritableStream({ write: (c) => void (text += new TextDecoder().decode(c)) }))
      .catch(() => {});
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const close = async () => {
    if (!exited) {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
    }
    await status;
    await drained;
  };
  // The first run installs Prism from npm: give it time.
  const deadline = Date.now() + 180_000;
  const url = `http://127.0.0.1:${port}`;
  while (Date.now() < deadline && !exited) {
    if (stripAnsi(text).includes(`Prism is listening on ${url}`)) {
      return { url, output: () => stripAnsi(text), close };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await close();
  throw new Error(`prism proxy (${errors ? "--errors" : "lenient"}) did not start:\n${text}`);
}

// ---------------------------------------------------------------------------------------------
// The document

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function operationsOf(doc: Json): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, value] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const op = value as Json;
      const params = [
        ...((item.parameters ?? []) as Json[]),
        ...((op.parameters ?? []) as Json[]),
      ];
      ops.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        queryParams: params.filter((p) => p.in === "query").map((p) => String(p.name)),
        hasBody: op.requestBody !== undefined,
        responses: op.responses as Operation["responses"],
      });
    }
  }
  return ops;
}

// ---------------------------------------------------------------------------------------------
// The data the suite works on, made directly on the service

interface Data {
  project: string;
  probeId: string;
  probeBody: Json;
  /** Ones the success calls of DELETE and PATCH use up. */
  projectToDelete: string;
  probeToPatch: string;
  probeToDelete: string;
  /** An open incident (of a probe on a closed port), a maintenance window, notification targets. */
  incidentId: string;
  windowId: string;
  targetName: string;
  targetToDelete: string;
  badgeId: string;
  badgeToDelete: string;
  /** A remote location with its token (the runner protocol's key), and ones to rotate, delete. */
  locationName: string;
  locationToken: string;
  locationToRotate: string;
  locationToDelete: string;
  /** API keys made at set-up: one to read and patch, one to rotate, one to delete. */
  apiKeyName: string;
  apiKeyToRotate: string;
  apiKeyToDelete: string;
  /** A run of the location claimed at set-up, for the results post. */
  runId: string;
  /** A heartbeat of the project, and one the DELETE call uses up. */
  heartbeatName: string;
  heartbeatToDelete: string;
  /** A dashboard session (signed in with the key) the DELETE call ends. */
  sessionToEnd: string;
}

async function makeData(base: string, apiKey: string): Promise<Data> {
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${API}${path}`, {
      method,
      headers: { "x-service-api-key": apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    assert.ok(res.ok, `setup ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const project = uniqueName("prism");
  const projectToDelete = uniqueName("prism-del");
  await call("POST", "/projects", { project, label: "Shop" });
  await call("POST", "/projects", { project: projectToDelete });
  const probeBody = { url: "http://127.0.0.1:9/health", method: "GET", latency: 300 };
  const probe = await call("POST", `/projects/${project}/probes`, probeBody);
  const toPatch = await call("POST", `/projects/${project}/probes`, {
    url: "http://127.0.0.1:9/patch-me",
  });
  const toDelete = await call("POST", `/projects/${project}/probes`, {
    url: "http://127.0.0.1:9/delete-me",
  });
  // The log channel needs no configuration, so the test report below is delivered.
  await call("PATCH", "/settings/iam-alive", { channels: ["log"] });
  // One failing run opens an incident (the probe's port is closed).
  await call("PATCH", `/projects/${project}/alerts`, { failure_threshold: 1 });
  await call("POST", `/projects/${project}/probes/${probe.data.probe_id}/run`, {});
  const incidents = await fetch(`${base}${API}/incidents?project=${project}`, {
    headers: { "x-service-api-key": apiKey },
  }).then((r) => r.json());
  const window = await call("POST", `/projects/${project}/maintenance`, {
    starts_at: "2031-01-01T00:00:00Z",
    ends_at: "2031-01-01T01:00:00Z",
  });
  const targetName = uniqueName("t");
  const targetToDelete = uniqueName("t-del");
  for (const name of [targetName, targetToDelete]) {
    await call("POST", "/notification-targets", {
      name,
      kind: "mail",
      recipients: ["ops@example.com"],
    });
  }
  const heartbeatName = uniqueName("hb");
  const heartbeatToDelete = uniqueName("hb-del");
  for (const name of [heartbeatName, heartbeatToDelete]) {
    await call("POST", `/projects/${project}/heartbeats`, { name, period_seconds: 3600 });
  }
  const badge = await call("POST", `/projects/${project}/badges`, {});
  const badgeToDelete = await call("POST", `/projects/${project}/badges`, {});
  const [location, locationToRotate, locationToDelete] = await Promise.all(
    ["prism-loc", "prism-rot", "prism-del"].map((p) =>
      call("POST", "/locations", { name: uniqueName(p) })
    ),
  );
  await call("POST", `/projects/${project}/probes`, {
    url: "http://127.0.0.1:9/remote",
    locations: [location.data.name],
  });
  const apiKeys = [];
  for (const p of ["prism-key", "prism-key-rot", "prism-key-del"]) {
    apiKeys.push(await call("POST", "/api-keys", { name: uniqueName(p), role: "viewer" }));
  }
  const claimed = await fetch(`${base}${API}/runner/claim`, {
    method: "POST",
    headers: { "x-service-api-key": location.data.token, "content-type": "application/json" },
    body: JSON.stringify({ runner: "prism", version: "1", wait_seconds: 5 }),
  }).then((r) => r.json());
  assert.equal(claimed.data.runs.length, 1, JSON.stringify(claimed));
  const signedIn = await fetch(`${base}/auth/sign-in`, {
    method: "POST",
    headers: { origin: base, "content-type": "application/json" },
    body: JSON.stringify({ api_key: apiKey }),
  }).then((r) => r.json());
  return {
    sessionToEnd: signedIn.data.id,
    locationName: location.data.name,
    locationToken: location.data.token,
    locationToRotate: locationToRotate.data.name,
    locationToDelete: locationToDelete.data.name,
    apiKeyName: apiKeys[0].data.name,
    apiKeyToRotate: apiKeys[1].data.name,
    apiKeyToDelete: apiKeys[2].data.name,
    runId: claimed.data.runs[0].run_id,
    heartbeatName,
    heartbeatToDelete,
    badgeId: badge.data.id,
    badgeToDelete: badgeToDelete.data.id,
    incidentId: incidents.data[0].id,
    windowId: window.data.id,
    targetName,
    targetToDelete,
    project,
    probeId: probe.data.probe_id,
    probeBody,
    projectToDelete,
    probeToPatch: toPatch.data.probe_id,
    probeToDelete: toDelete.data.probe_id,
  };
}

// ---------------------------------------------------------------------------------------------
// The suite

type Spec = Omit<Call, "op" | "via" | "body"> & { body?: unknown };

/** A success (or more) for each operation; a new operation needs a line here. */
const SUCCESS: Record<string, (d: Data) => Spec[]> = {
  "POST /projects": () => [
    { label: "create", body: { project: uniqueName("prism-new"), label: "Shop" }, expect: 201 },
  ],
  "GET /projects": (d) => [
    { label: "list", expect: 200 },
    { label: "list one", query: `project=${d.project}`, expect: 200 },
  ],
  "GET /projects/{project}": () => [{ label: "get", expect: 200 }],
  "PATCH /projects/{project}": () => [
    { label: "patch", body: { description: "The shop", status: "enabled" }, expect: 200 },
  ],
  "DELETE /projects/{project}": (d) => [
    { label: "delete", params: { project: d.projectToDelete }, expect: 200 },
  ],
  "POST /projects/{project}/probes": (d) => [
    {
      label: "create",
      body: { url: `http://127.0.0.1:9/${uniqueName("new")}`, method: "GET", latency: 300 },
      expect: 201,
    },
    { label: "create an existing probe again", body: d.probeBody, expect: 200 },
  ],
  "GET /projects/{project}/probes": () => [{ label: "list", expect: 200 }],
  "POST /probes": (d) => [
    {
      label: "create",
      body: {
        project: d.project,
        url: `http://127.0.0.1:9/${uniqueName("other")}`,
        method: "POST",
        body: { a: 1 },
      },
      expect: 201,
    },
  ],
  "GET /probes": (d) => [
    { label: "list", expect: 200 },
    { label: "list one project's", query: `project=${d.project}`, expect: 200 },
  ],
  "GET /projects/{project}/probes/{probeId}": () => [{ label: "get", expect: 200 }],
  "PATCH /projects/{project}/probes/{probeId}": (d) => [
    {
      label: "patch",
      params: { probeId: d.probeToPatch },
      body: { method: "HEAD", latency: null },
      expect: 200,
    },
  ],
  "DELETE /projects/{project}/probes/{probeId}": (d) => [
    { label: "delete", params: { probeId: d.probeToDelete }, expect: 204 },
  ],
  "GET /settings/iam-alive": () => [{ label: "get", expect: 200 }],
  "PATCH /settings/iam-alive": () => [
    { label: "patch", body: { interval_hours: 12, channels: ["log"] }, expect: 200 },
  ],
  "POST /settings/iam-alive/test": () => [{ label: "send a test report", body: {}, expect: 200 }],
  "GET /settings/iam-alive/deliveries": () => [
    { label: "list", query: "limit=5", expect: 200 },
  ],
  "GET /projects/{project}/probes/{probeId}/results": () => [
    { label: "list", query: "limit=10", expect: 200 },
  ],
  "GET /projects/{project}/probes/{probeId}/stats": () => [
    { label: "stats", query: "window=7d", expect: 200 },
  ],
  "GET /projects/{project}/status": () => [{ label: "status", expect: 200 }],
  "POST /projects/{project}/probes/{probeId}/run": () => [
    { label: "run now", expect: 200 },
    { label: "run now with {}", body: {}, expect: 200 },
  ],
  "GET /incidents": (d) => [
    { label: "list", expect: 200 },
    {
      label: "list one project's open ones",
      query: `project=${d.project}&state=open`,
      expect: 200,
    },
  ],
  "GET /incidents/{id}": () => [{ label: "get", expect: 200 }],
  "POST /incidents/{id}/acknowledge": () => [{ label: "acknowledge", expect: 200 }],
  "GET /settings/alerts": () => [{ label: "get", expect: 200 }],
  "PATCH /settings/alerts": () => [
    { label: "patch", body: { reminder_minutes: 60 }, expect: 200 },
  ],
  "GET /projects/{project}/alerts": () => [{ label: "get", expect: 200 }],
  "PATCH /projects/{project}/alerts": () => [
    { label: "patch", body: { success_threshold: 3, notify_degraded: null }, expect: 200 },
  ],
  "GET /projects/{project}/maintenance": () => [
    { label: "list", expect: 200 },
    { label: "list upcoming", query: "state=upcoming", expect: 200 },
  ],
  "POST /projects/{project}/maintenance": () => [{
    label: "create",
    body: { starts_at: "2032-01-01T00:00:00Z", ends_at: "2032-01-01T02:00:00Z", reason: "x" },
    expect: 201,
  }],
  "DELETE /projects/{project}/maintenance/{id}": (d) => [
    { label: "delete", params: { id: d.windowId }, expect: 204 },
  ],
  "POST /notification-targets": () => [{
    label: "create",
    body: { name: uniqueName("t-new"), kind: "webhook", url: "https://hooks.example.com/x" },
    expect: 201,
  }],
  "GET /notification-targets": () => [{ label: "list", expect: 200 }],
  "GET /notification-targets/{name}": () => [{ label: "get", expect: 200 }],
  "PATCH /notification-targets/{name}": () => [
    { label: "patch", body: { recipients: ["oncall@example.com"] }, expect: 200 },
  ],
  "DELETE /notification-targets/{name}": (d) => [
    { label: "delete", params: { name: d.targetToDelete }, expect: 204 },
  ],
  "GET /overview": (d) => [
    { label: "everything", expect: 200 },
    { label: "one project", query: `project=${d.project}`, expect: 200 },
  ],
  "GET /projects/{project}/probes/{probeId}/series": () => [
    { label: "24 hours", expect: 200 },
    { label: "90 days", query: "window=90d", expect: 200 },
  ],
  "GET /projects/{project}/status-page": () => [{ label: "get", expect: 200 }],
  "PATCH /projects/{project}/status-page": () => [
    { label: "make public", body: { public: true, title: "Shop" }, expect: 200 },
  ],
  "GET /projects/{project}/badges": () => [{ label: "list", expect: 200 }],
  "POST /projects/{project}/badges": () => [
    { label: "a project badge", body: {}, expect: 201 },
  ],
  "POST /projects/{project}/badges/{id}/rotate": (d) => [
    { label: "rotate", params: { id: d.badgeId }, expect: 200 },
  ],
  "DELETE /projects/{project}/badges/{id}": (d) => [
    { label: "delete", params: { id: d.badgeToDelete }, expect: 204 },
  ],
  "POST /notification-targets/{name}/test": () => [
    { label: "test the built-in log", params: { name: "log" }, expect: 200 },
  ],
  "GET /whoami": () => [{ label: "a write key", expect: 200 }],
  "GET /api-keys": () => [{ label: "list", expect: 200 }],
  "POST /api-keys": (d) => [
    { label: "a viewer", body: { name: uniqueName("k-new"), role: "viewer" }, expect: 201 },
    {
      label: "an editor of one project, expiring",
      body: {
        name: uniqueName("k-new"),
        role: "editor",
        projects: [d.project],
        expires_at: "2099-01-01T00:00:00Z",
      },
      expect: 201,
    },
  ],
  "GET /api-keys/{name}": (d) => [
    { label: "get", params: { name: d.apiKeyName }, expect: 200 },
    { label: "a configured key", params: { name: "SERVICE_API_KEY" }, expect: 200 },
  ],
  "PATCH /api-keys/{name}": (d) => [
    { label: "role", params: { name: d.apiKeyName }, body: { role: "editor" }, expect: 200 },
  ],
  "DELETE /api-keys/{name}": (d) => [
    { label: "delete", params: { name: d.apiKeyToDelete }, expect: 204 },
  ],
  "POST /api-keys/{name}/rotate": (d) => [
    { label: "rotate", params: { name: d.apiKeyToRotate }, expect: 200 },
  ],
  "GET /audit-log": () => [
    { label: "a page", query: "limit=10", expect: 200 },
    { label: "one resource type", query: "resource=project", expect: 200 },
  ],
  "GET /sessions": () => [{ label: "list", expect: 200 }],
  "DELETE /sessions/{id}": (d) => [
    { label: "end", params: { id: d.sessionToEnd }, expect: 204 },
  ],
  "GET /locations": () => [{ label: "list", expect: 200 }],
  "POST /locations": () => [{ label: "create", body: { name: uniqueName("l-new") }, expect: 201 }],
  "GET /locations/{location}": () => [{ label: "get", expect: 200 }],
  "PATCH /locations/{location}": () => [{ label: "label", body: { label: "Office" }, expect: 200 }],
  "DELETE /locations/{location}": (d) => [
    { label: "delete", params: { location: d.locationToDelete }, expect: 204 },
  ],
  "POST /locations/{location}/token": (d) => [
    { label: "rotate", params: { location: d.locationToRotate }, expect: 200 },
  ],
  "GET /notification-target-kinds": () => [{ label: "list", expect: 200 }],
  "POST /projects/{project}/heartbeats": () => [
    {
      label: "by period",
      body: { name: uniqueName("hb-new"), period_seconds: 600, grace_seconds: 60 },
      expect: 201,
    },
    {
      label: "by schedule",
      body: { name: uniqueName("hb-cron"), schedule: "0 3 * * *", timezone: "Europe/Berlin" },
      expect: 201,
    },
  ],
  "GET /projects/{project}/heartbeats": () => [{ label: "list", expect: 200 }],
  "GET /projects/{project}/heartbeats/{name}": (d) => [
    { label: "get", params: { name: d.heartbeatName }, expect: 200 },
  ],
  "PATCH /projects/{project}/heartbeats/{name}": (d) => [
    { label: "patch", params: { name: d.heartbeatName }, body: { grace_seconds: 90 }, expect: 200 },
  ],
  "DELETE /projects/{project}/heartbeats/{name}": (d) => [
    { label: "delete", params: { name: d.heartbeatToDelete }, expect: 204 },
  ],
  "GET /projects/{project}/heartbeats/{name}/pings": (d) => [
    { label: "pings", params: { name: d.heartbeatName }, expect: 200 },
  ],
  // The runner protocol takes the location's token (see `run`).
  "POST /runner/claim": () => [
    { label: "claim", body: { runner: "prism", version: "1", wait_seconds: 0 }, expect: 200 },
  ],
  "POST /runner/results": (d) => [{
    label: "post a result",
    body: {
      runner: "prism",
      version: "1",
      results: [{
        run_id: d.runId,
        started_at: new Date().toISOString(),
        duration_ms: 3,
        outcome: "down",
        http_status: null,
        error: "connection refused",
        address: "127.0.0.1",
        failed_checks: null,
      }],
    },
    expect: 200,
  }],
};

/** Bodies with a bad field, by operation (422). */
const BAD_BODY: Record<string, (d: Data) => { label: string; body: unknown }> = {
  "POST /projects": () => ({ label: "project name with a space", body: { project: "a b" } }),
  "PATCH /projects/{project}": () => ({ label: "unknown status", body: { status: "paused" } }),
  "POST /projects/{project}/probes": () => ({ label: "url not a URL", body: { url: "not a url" } }),
  "POST /probes": (d) => ({
    label: "latency 0",
    body: { project: d.project, url: "http://127.0.0.1:9/", latency: 0 },
  }),
  "PATCH /projects/{project}/probes/{probeId}": () => ({
    label: "method not an HTTP method",
    body: { method: "FETCH" },
  }),
  "PATCH /settings/iam-alive": () => ({ label: "interval 25 hours", body: { interval_hours: 25 } }),
};

/**
 * What a call on a missing project answers where that is not 404: a list under a project that
 * does not exist is an empty list.
 */
const MISSING_PROJECT_ANSWER: Record<string, number> = { "GET /projects/{project}/probes": 200 };

const MISSING_PROBE_ID = "0000000000000000";

function buildCalls(ops: Operation[], d: Data, findings: Finding[]): Call[] {
  const calls: Call[] = [];
  const add = (op: Operation, via: Via, p: Spec) =>
    calls.push({
      ...p,
      op,
      via,
      body: p.body === undefined ? undefined : JSON.stringify(p.body),
    });
  for (const op of ops) {
    const successes = SUCCESS[op.key]?.(d) ?? [];
    if (successes.length === 0) {
      findings.push({
        op: op.key,
        label: "(suite)",
        status: null,
        problem: "no success call for this operation: add one to SUCCESS in this test",
      });
    }
    for (const s of successes) add(op, "strict", s);
    // The calls below use the shared project and probe (none of them may change anything) and a
    // valid body, so that only what each is about is wrong.
    const body = op.hasBody ? (successes[0]?.body ?? {}) : undefined;

    add(op, "lenient", { label: "no API key", key: false, body, expect: 401 });
    if (op.path.includes("{project}")) {
      add(op, "strict", {
        label: "missing project",
        params: { project: uniqueName("missing"), probeId: MISSING_PROBE_ID },
        body,
        expect: MISSING_PROJECT_ANSWER[op.key] ?? 404,
      });
    }
    if (op.path.includes("{probeId}")) {
      add(op, "strict", {
        label: "missing probe",
        params: { probeId: MISSING_PROBE_ID },
        body,
        expect: 404,
      });
    }
    for (const name of op.queryParams) {
      add(op, "lenient", {
        label: `NUL in query parameter ${name}`,
        query: `${encodeURIComponent(name)}=a%00b`,
        expect: 422,
      });
    }
    if (op.hasBody) {
      const bad = BAD_BODY[op.key]?.(d);
      if (bad) add(op, "lenient", { label: bad.label, body: bad.body, expect: 422 });
      add(op, "lenient", { label: "body not an object", body: [], expect: 422 });
      // Prism parses a JSON body itself before forwarding it, and a malformed one never reaches
      // the service (stoplightio/prism#2664; under Deno the connection just hangs). So this call
      // goes straight to the service and the test checks its status and media type against the
      // document itself.
      calls.push({
        op,
        via: "direct",
        label: "malformed JSON",
        body: '{"project":',
        expect: 400,
      });
      // Prism would parse the body and send one of the keys: straight to the service too.
      calls.push({
        op,
        via: "direct",
        label: "repeated key",
        body: '{"label":"a","label":"b"}',
        expect: 422,
      });
      calls.push({
        op,
        via: "lenient",
        label: "text/plain body",
        body: JSON.stringify(body),
        contentType: "text/plain",
        expect: 415,
      });
      const padded = { ...(body as Json), padding: "x".repeat(ONE_MIB) };
      add(op, "lenient", { label: "body over 1 MiB", body: padded, expect: 413 });
    }
  }
  const createProject = ops.find((op) => op.key === "POST /projects");
  if (createProject) {
    add(createProject, "strict", {
      label: "duplicate project",
      body: { project: d.project },
      expect: 409,
    });
  }
  return calls;
}

function concretePath(call: Call, d: Data): string {
  const values: Record<string, string> = {
    project: d.project,
    probeId: d.probeId,
    id: d.incidentId,
    name: d.targetName,
    location: d.locationName,
  };
  Object.assign(values, call.params);
  return call.op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    assert.ok(name in values, `${call.op.key}: no value for path parameter ${name}`);
    return encodeURIComponent(values[name]);
  });
}

interface Violation {
  location?: string[];
  severity?: string;
  code?: string | number;
  message?: string;
}

function parseViolations(header: string): Violation[] {
  try {
    return JSON.parse(header) as Violation[];
  } catch {
    // Past ~8 KiB Prism cuts the header and prefixes "Too many violations!".
    return [{ location: ["?"], severity: "Error", message: header.slice(0, 500) }];
  }
}

/** Sends a call and records what breaches the document (or misses the call's aim). */
async function run(
  call: Call,
  d: Data,
  bases: Record<Via, string>,
  apiKey: string,
  findings: Finding[],
): Promise<void> {
  const headers: Record<string, string> = { "accept-encoding": "identity" };
  // The runner protocol answers a location's token only (every key is out of its scope).
  const key = call.op.path.startsWith("/runner/") ? d.locationToken : apiKey;
  if (call.key !== false) headers["x-service-api-key"] = key;
  if (call.body !== undefined) headers["content-type"] = call.contentType ?? "application/json";
  const url = `${bases[call.via]}${concretePath(call, d)}${call.query ? `?${call.query}` : ""}`;
  const found = (status: number | null, problem: string) =>
    findings.push({ op: call.op.key, label: `${call.label} [${call.via}]`, status, problem });

  let res: Response;
  try {
    res = await fetch(url, {
      method: call.op.method,
      headers,
      body: call.body,
      signal: AbortSignal.timeout(15_000),
    });
  } catch (e) {
    found(null, `no answer: ${e}`);
    return;
  }
  const text = await res.text();
  const contentType = res.headers.get("content-type") ?? "";

  let prismError: Json | undefined;
  if (contentType.startsWith("application/problem+json")) {
    try {
      const body = JSON.parse(text) as Json;
      if (String(body.type ?? "").startsWith(PRISM_ERROR)) prismError = body;
    } catch { /* not Prism's */ }
  }
  if (prismError) {
    const detail = prismError.validation
      ? (prismError.validation as Violation[]).map((v) =>
        `${(v.location ?? []).join(".")}: ${v.message}`
      ).join("; ")
      : String(prismError.detail ?? "");
    found(res.status, `Prism answered ${prismError.type}: ${prismError.title}: ${detail}`);
  }

  // The violations Prism's error answer already listed, not to be listed twice.
  const listed = new Set(
    ((prismError?.validation ?? []) as Violation[]).map((v) => JSON.stringify(v.location)),
  );
  const header = res.headers.get("sl-violations");
  if (header) {
    for (const v of parseViolations(header)) {
      // The lenient proxy's calls break the request rules on purpose.
      if (call.via === "lenient" && v.location?.[0] === "request") continue;
      if (listed.has(JSON.stringify(v.location))) continue;
      const where = (v.location ?? []).join(".");
      found(res.status, `${where}: ${v.message} (${v.severity})`);
    }
  }

  if (call.via === "direct") {
    // What Prism would have checked, for the call it cannot forward.
    const documented = call.op.responses[String(res.status)];
    if (!documented) {
      found(
        res.status,
        `response: status ${res.status} is not among the documented ${
          Object.keys(call.op.responses).join(",")
        } (checked by the test)`,
      );
    } else if (documented.content && !(contentType.split(";")[0] in documented.content)) {
      found(res.status, `response: content type ${contentType} is not documented`);
    }
  }

  if (!prismError && res.status !== call.expect) {
    found(
      res.status,
      `suite: expected ${call.expect}, the service answered ${res.status}: ${text.slice(0, 200)}`,
    );
  }
}

function report(findings: Finding[], calls: number): string {
  const lines = findings.map((f) =>
    `  ${f.op} — ${f.label} → ${f.status ?? "-"}: ${f.problem.replaceAll("\n", " ")}`
  );
  return `${findings.length} breach(es) of the OpenAPI document in ${calls} calls through ` +
    `Prism ${PRISM_VERSION}:\n${lines.join("\n")}`;
}

Deno.test("every REST operation through a Prism validating proxy keeps to the served document", async () => {
  const server = await startLiveServer();
  const tmp = await Deno.makeTempDir({ prefix: "prism-proxy-" });
  const prisms: Prism[] = [];
  try {
    const docText = await (await fetch(`${server.url}${API}/openapi.json`)).text();
    const doc = JSON.parse(docText) as Json;
    const document = `${tmp}/openapi.json`;
    await Deno.writeTextFile(document, docText);

    const upstream = `${server.url}${API}`;
    // One after the other: the first start may install Prism into the shared cache folder.
    const strict = await startPrism(document, upstream, true);
    prisms.push(strict);
    const lenient = await startPrism(document, upstream, false);
    prisms.push(lenient);

    const data = await makeData(server.url, server.apiKey);
    const findings: Finding[] = [];
    const ops = operationsOf(doc);
    assert.ok(ops.length > 0, "the document lists no operation");
    const calls = buildCalls(ops, data, findings);
    const bases: Record<Via, string> = {
      strict: strict.url,
      lenient: lenient.url,
      direct: upstream,
    };
    for (const call of calls) await run(call, data, bases, server.apiKey, findings);

    console.log(
      `${calls.length} calls on ${ops.length} operations through Prism ${PRISM_VERSION} ` +
        `(${calls.filter((c) => c.via === "direct").length} straight to the service)`,
    );
    assert.ok(findings.length === 0, report(findings, calls.length));
  } finally {
    for (const prism of prisms) await prism.close();
    await server.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
