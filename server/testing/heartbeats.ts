/**
 * Test support for heartbeats: an app whose heartbeats run on a clock the test drives, with a
 * read-only key besides the write key, and helpers to make a project and a heartbeat.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type App, createApp } from "../app.ts";
import type { DatabaseHandle } from "../storage/database.ts";
import { createLogger } from "../base/log.ts";
import type { Clock } from "../base/clock.ts";
import {
  type Backend,
  freshDatabase,
  TEST_API_KEY,
  TEST_READ_KEY,
  TestClient,
  uniqueName,
} from "./app.ts";

/** An app over `database` (a fresh one when absent) whose heartbeats use `clock`. */
export async function heartbeatApp(
  backend: Backend,
  { clock, database, publicUrl }: {
    clock?: Clock;
    database?: DatabaseHandle;
    publicUrl?: string;
  } = {},
): Promise<{ app: App; api: TestClient }> {
  const app = await createApp({
    database: database ?? await freshDatabase(backend),
    apiKeys: [TEST_API_KEY],
    log: createLogger("silent"),
    config: { readOnlyApiKeys: [TEST_READ_KEY], publicUrl },
    remoteRuns: { syncEveryMs: 0 },
    clock,
  });
  return { app, api: new TestClient(app.handler) };
}

/** A new project's name. */
export async function newProject(api: TestClient): Promise<string> {
  const project = uniqueName();
  const res = await api.post("/api/v1/projects", { project });
  assert.equal(res.status, 201, res.text);
  return project;
}

/** The path of a project's heartbeats, or of one of them. */
export const heartbeatsPath = (project: string, name?: string) =>
  `/api/v1/projects/${project}/heartbeats${name === undefined ? "" : `/${name}`}`;

/** Makes a heartbeat and answers it (its `ping_url` included). */
// deno-lint-ignore no-explicit-any
export async function newHeartbeat(api: TestClient, project: string, body: object): Promise<any> {
  const res = await api.post(heartbeatsPath(project), body);
  assert.equal(res.status, 201, res.text);
  return res.body.data;
}

/** The path of a ping URL on the test client (its origin cut off), with `suffix` after it. */
export const pingPath = (pingUrl: string, suffix = "") =>
  new URL(pingUrl).pathname + (suffix === "" ? "" : `/${suffix}`);

/** A heartbeat's incidents (the latest first). */
export async function incidentsOf(
  api: TestClient,
  project: string,
  probeId: string,
): Promise<{ state: string; last_error: string | null }[]> {
  const res = await api.get(`/api/v1/incidents?project=${project}&probe_id=${probeId}`);
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}
