/**
 * Test support: every suite runs once on the embedded database and, when TEST_DATABASE_URL is
 * set, once more on PostgreSQL, each in a database of its own. Requests go through the real
 * handler as `Request`s.
 */
import postgres from "postgres";
import { Migrator } from "kysely/migration";
import { migrations } from "../../migrations/mod.ts";
import { type App, createApp } from "../app.ts";
import {
  type DatabaseHandle,
  type DatabaseTarget,
  type Db,
  openDatabase,
  openEmbedded,
} from "../storage/database.ts";
import { keptEmbedded, keptPostgres } from "./reused_databases.ts";
import { dropDatabases } from "./drop_databases.ts";
import { migrateToLatest } from "../storage/migrator.ts";
import { createLogger, type Logger } from "../base/log.ts";
import { createNetworkPolicy, parseNetworks } from "../base/outbound/network_policy.ts";
import { executeProbe } from "../runner/execute.ts";

export const TEST_API_KEY = "test-key-0123456789";
/** A key of SERVICE_API_KEYS_READONLY, for tests of what such a key may do. */
export const TEST_READ_KEY = "reader-key-0123456789";
export const BASE = "http://service.test";

export type Backend = "pglite" | "postgres";

export function backends(): Backend[] {
  return Deno.env.get("TEST_DATABASE_URL") ? ["pglite", "postgres"] : ["pglite"];
}

/**
 * Where the migrations stop: at the named one, at none (`null`: no table at all) or, when
 * absent, at the newest.
 */
type Stop = string | null | undefined;

/** The key of a stop in the maps below. */
const stopKey = (to: Stop) => to === null ? "(none)" : to ?? "";

/** Dumps by where their migrations stopped. */
const snapshots = new Map<string, Promise<Blob>>();

/**
 * A migrated embedded database, as a dump: loading one takes ~0.4 s where creating one takes
 * 4-6 s. Made once per machine, not once per test file: the dump is kept in the temporary
 * folder under a name that changes with the migrations and the PGlite version, and the first
 * test file to need it makes it while the others wait on a lock. Where that folder cannot be
 * used, each test file makes its own. `to`: the last migration run (all when absent).
 */
function migratedSnapshot(to?: Stop): Promise<Blob> {
  let snapshot = snapshots.get(stopKey(to));
  if (!snapshot) {
    snapshot = cachedSnapshot(to).catch(() => makeSnapshot(to));
    snapshots.set(stopKey(to), snapshot);
  }
  return snapshot;
}

/**
 * The migrated embedded database as a dump, for a test that opens it its own way (on disk, in a
 * worker thread): loading it costs a fraction of creating a database.
 */
export function migratedDump(): Promise<Blob> {
  return migratedSnapshot();
}

/** Runs the migrations up to `to` (all when absent, none when null). */
async function migrate(db: Db, to: Stop): Promise<void> {
  if (to === null) return;
  if (to === undefined) {
    await migrateToLatest(db);
    return;
  }
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
  });
  const result = await migrator.migrateTo(to);
  if (result.error) throw result.error;
}

async function makeSnapshot(to: Stop): Promise<Blob> {
  const handle = await openDatabase({ kind: "pglite" });
  await migrate(handle.db, to);
  const pglite = handle.pglite!;
  // The service's database is `postgres`; the two templates beside it are copies of the
  // catalogs, 600 of the dump's 1,100 files, that every test database would unpack again for
  // nothing (a test never creates a database on the embedded one).
  for (const name of ["template0", "template1"]) {
    await pglite.query(`alter database ${name} is_template false`);
    await pglite.query(`drop database ${name}`);
  }
  await pglite.query("checkpoint");
  const dump = await pglite.dumpDataDir("none");
  await handle.close();
  return dump;
}

/** What the dumps hold besides the schema; a change of it gives them a new name. */
const SNAPSHOT_FORM = "postgres alone, no template databases";

const MIGRATIONS_DIR = new URL("../../migrations/", import.meta.url);

/**
 * A name for the schema the migrations make (from their text), and for what else is given: a
 * database migrated by different migrations, or written by another PGlite, gets another name.
 */
async function migrationsKey(...others: string[]): Promise<string> {
  const parts = [...others];
  const names = [];
  for await (const entry of Deno.readDir(MIGRATIONS_DIR)) names.push(entry.name);
  for (const name of names.sort()) {
    parts.push(name, await Deno.readTextFile(new URL(name, MIGRATIONS_DIR)));
  }
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts.join("\0")));
  return Array.from(new Uint8Array(digest).slice(0, 12), (b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** The name part that says where the migrations stopped: none for the newest. */
const upTo = (to: Stop) => to === undefined ? [] : to === null ? ["none"] : [`to ${to}`];

/**
 * The UTC day a dump or a template is made for (`yyyymmdd`): migrating makes the daily partitions
 * of results from that day on, and a copy made days ago would hold the partitions of those days
 * (a test putting a run three days back in no partition would find one).
 */
const madeOn = (at = Date.now()) => new Date(at).toISOString().slice(0, 10).replaceAll("-", "");

async function cachedSnapshot(to: Stop): Promise<Blob> {
  const dir = `${Deno.env.get("TMPDIR") || "/tmp"}/probe-monitor-test-pglite`;
  await Deno.mkdir(dir, { recursive: true });
  const key = await migrationsKey(
    import.meta.resolve("@electric-sql/pglite"),
    SNAPSHOT_FORM,
    madeOn(),
    ...upTo(to),
  );
  const path = `${dir}/${key}.tar`;
  const read = async () => new Blob([await Deno.readFile(path)]);
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  using lock = await Deno.open(`${path}.lock`, { write: true, create: true });
  await lock.lock(true);
  try {
    return await read(); // made by another test file while this one waited
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const dump = await makeSnapshot(to);
  // Written aside and renamed, so that no reader ever sees half a dump.
  const partial = `${path}.${crypto.randomUUID()}`;
  await Deno.writeFile(partial, dump.stream());
  await Deno.rename(partial, path);
  await removeStaleSnapshots(dir, key);
  return dump;
}

/** Drops dumps of other schemas or days (40 MB each), and leftovers, that are a day old. */
async function removeStaleSnapshots(dir: string, key: string): Promise<void> {
  const dayAgo = Date.now() - 86_400_000;
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name === `${key}.tar` || entry.name === `${key}.tar.lock`) continue;
    const path = `${dir}/${entry.name}`;
    const modified = (await Deno.stat(path).catch(() => null))?.mtime?.getTime() ?? Infinity;
    if (modified < dayAgo) await Deno.remove(path).catch(() => {});
  }
}

const TEMPLATE_PREFIX = "probe_test_template_";

/**
 * Drops the templates made before `since` (a `yyyymmdd`), and those named before templates had a
 * day; one another test run is copying from stays (PostgreSQL refuses to drop it).
 */
async function dropStaleTemplates(admin: postgres.Sql, since: string): Promise<void> {
  const names = await admin<{ datname: string }[]>`
    select datname from pg_database where datname like ${`${TEMPLATE_PREFIX}%`}`;
  for (const { datname } of names) {
    const day = /_(\d{8})$/.exec(datname)?.[1];
    if (day !== undefined && day >= since) continue;
    if (!/^probe_test_template_[0-9a-f]+(_\d{8})?$/.test(datname)) continue;
    await admin.unsafe(`drop database if exists ${datname}`).catch(() => {});
  }
}

/** Template databases' names by where their migrations stopped. */
const templates = new Map<string, Promise<string>>();

/**
 * A migrated PostgreSQL database to copy fresh ones from (copying takes about half the time of
 * creating one and migrating it). Made once per server, migrations and UTC day (`madeOn`), under
 * an advisory lock so that test files and test runs at the same time make it once; made under a
 * name of its own and renamed when complete, so that a run killed half-way leaves no half-made
 * template. Making one drops those of days before yesterday (any that is in use stays).
 */
function migratedTemplate(adminUrl: string, to: Stop): Promise<string> {
  const made = templates.get(stopKey(to));
  if (made) return made;
  const template = (async () => {
    const day = madeOn();
    const name = `${TEMPLATE_PREFIX}${await migrationsKey(...upTo(to))}_${day}`;
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    try {
      await admin`select pg_advisory_lock(hashtext(${name}))`;
      try {
        const [found] = await admin`select 1 from pg_database where datname = ${name}`;
        if (!found) {
          await dropStaleTemplates(admin, madeOn(Date.now() - 86_400_000));
          const partial = `${name}_${crypto.randomUUID().slice(0, 8)}`;
          await admin.unsafe(`create database ${partial}`);
          try {
            const url = new URL(adminUrl);
            url.pathname = `/${partial}`;
            const handle = await openDatabase({ kind: "postgres", url: url.href, poolSize: 1 });
            try {
              await migrate(handle.db, to);
            } finally {
              await handle.close();
            }
            await admin.unsafe(`alter database ${partial} rename to ${name}`);
          } catch (error) {
            await admin.unsafe(`drop database if exists ${partial} with (force)`);
            throw error;
          }
        }
      } finally {
        await admin`select pg_advisory_unlock(hashtext(${name}))`;
      }
    } finally {
      await admin.end();
    }
    return name;
  })();
  templates.set(stopKey(to), template);
  template.catch(() => templates.delete(stopKey(to)));
  return template;
}

/**
 * A fresh database of the given kind, migrated to the latest schema (or up to the migration
 * `migratedTo`, or not at all when it is null) and holding nothing else (but the rows the
 * migrations insert). Closing it puts it back as made for the next test of this process
 * (`reused_databases.ts`), or drops it. `reuse: false` drops it always: a script (not
 * `deno test`) needs that, since an embedded database kept open keeps its process running.
 */
export async function freshDatabase(
  backend: Backend,
  { migratedTo, reuse = true }: { migratedTo?: string | null; reuse?: boolean } = {},
): Promise<DatabaseHandle> {
  const kind = stopKey(migratedTo);
  if (backend === "pglite") {
    const loadDataDir = await migratedSnapshot(migratedTo);
    if (!reuse) return openDatabase({ kind: "pglite", loadDataDir });
    return await keptEmbedded(kind, () => openEmbedded({ loadDataDir }));
  }
  const adminUrl = Deno.env.get("TEST_DATABASE_URL");
  if (!adminUrl) throw new Error("TEST_DATABASE_URL is not set");
  if (migratedTo === null) return await openDropping(await createPostgresDatabase(adminUrl));
  const copy = async () =>
    createPostgresDatabase(adminUrl, "probe_test", await migratedTemplate(adminUrl, migratedTo));
  return await openDropping(reuse ? await keptPostgres(kind, adminUrl, copy) : await copy());
}

/** Opens a database made by `createPostgresDatabase`; closing the handle drops the database. */
export async function openDropping(
  { url, drop }: { url: string; drop(): Promise<void> },
): Promise<DatabaseHandle> {
  // A connection may take seconds to open on a machine busy with the other test files: the
  // tests check what the service does once connected, not the production 1.5 s limit (the
  // tests of that limit open their own database with it).
  const handle = await openDatabase({ kind: "postgres", url, connectTimeoutMs: 10_000 });
  return {
    ...handle,
    close: async () => {
      await handle.close();
      await drop();
    },
  };
}

/**
 * Creates a PostgreSQL database of its own next to TEST_DATABASE_URL's (or `adminUrl`'s): empty,
 * or a copy of the `template` database.
 */
export async function createPostgresDatabase(
  adminUrl = Deno.env.get("TEST_DATABASE_URL"),
  prefix = "probe_test",
  template?: string,
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  if (!adminUrl) throw new Error("TEST_DATABASE_URL is not set");
  const name = `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}${template ? ` template ${template}` : ""}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    name,
    drop: () => dropDatabases(adminUrl, [name]),
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
  text: string;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as-is instead of `body`. */
  raw?: BodyInit;
  /** The API key; null sends none. */
  key?: string | null;
  headers?: Record<string, string>;
}

/** Calls into a handler the way an HTTP client would. */
export class TestClient {
  constructor(readonly handler: (request: Request) => Promise<Response>) {}

  async call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    const headers = new Headers(options.headers);
    const key = options.key === undefined ? TEST_API_KEY : options.key;
    if (key !== null) headers.set("x-service-api-key", key);
    let body: BodyInit | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    const response = await this.handler(new Request(`${BASE}${path}`, { method, headers, body }));
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch { /* not JSON: keep the text */ }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  get = (path: string, o?: CallOptions) => this.call("GET", path, o);
  post = (path: string, body?: unknown, o?: CallOptions) => this.call("POST", path, { ...o, body });
  patch = (path: string, body?: unknown, o?: CallOptions) =>
    this.call("PATCH", path, { ...o, body });
  delete = (path: string, o?: CallOptions) => this.call("DELETE", path, o);
}

export interface TestContext {
  api: TestClient;
  app: App;
  backend: Backend;
}

type Case = { name: string; fn: (t: TestContext) => Promise<void> };

/**
 * Declares a suite whose cases share one app per backend. Cases build their own data (unique
 * names), so none depends on another's leftovers and none wipes tables.
 */
export function apiSuite(
  name: string,
  define: (test: (name: string, fn: (t: TestContext) => Promise<void>) => void) => void,
): void {
  const cases: Case[] = [];
  define((caseName, fn) => cases.push({ name: caseName, fn }));
  for (const backend of backends()) {
    Deno.test(`${name} [${backend}]`, async (t) => {
      const app = await startTestApp(backend);
      try {
        for (const c of cases) {
          await t.step(c.name, () => c.fn({ api: new TestClient(app.handler), app, backend }));
        }
      } finally {
        await app.close();
      }
    });
  }
}

/** An app over a fresh database of the given kind, logging nothing. */
export async function startTestApp(
  backend: Backend,
  options: {
    apiKeys?: string[];
    /** `MAX_ANSWER_BYTES`; the service's default when absent. */
    maxAnswerBytes?: number;
    /** Where the log goes; nowhere when absent. */
    log?: Logger;
    /** `freshDatabase`'s: false for a script. */
    reuse?: boolean;
  } = {},
): Promise<App> {
  const database: DatabaseHandle | DatabaseTarget = await freshDatabase(backend, {
    reuse: options.reuse,
  });
  return createApp({
    database,
    apiKeys: options.apiKeys ?? [TEST_API_KEY],
    log: options.log ?? createLogger("silent"),
    config: { maxAnswerBytes: options.maxAnswerBytes },
    // Remote runners' claims add new probes' schedule rows each time, not every 2 s at most.
    remoteRuns: { syncEveryMs: 0 },
    // Run-now may reach local targets (`startTarget()`), as the tests' runners may.
    runProbe: (target, hooks) =>
      executeProbe(target, { ...hooks, policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
  });
}

/** The network policy of test runs: loopback open, everything else as by default. */
export const LOOPBACK_ONLY = createNetworkPolicy(parseNetworks("127.0.0.0/8"));

/** A name no other test uses. */
export function uniqueName(prefix = "p"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}
