/**
 * Test databases used again within a process. Making one costs: an embedded database ~0.3 s of
 * CPU to open, a PostgreSQL copy of the migrated template ~0.6 s of the server's CPU. So when a
 * test closes its database, the database is put back as the migrations left it and kept for the
 * next test of the same process that asks for one. Put back means:
 *
 * - no session is left: on PostgreSQL no other connection, on PGlite (one session) `DISCARD ALL`
 *   after any open transaction is rolled back;
 * - the schema as it was: a digest of the catalog (tables, columns, indexes, constraints,
 *   triggers, functions, types, views, sequences, schemas, extensions, settings) is unchanged;
 * - every table that holds a row it did not hold when made emptied, with every table that
 *   references it, and the rows the migrations inserted put back in those that held some;
 * - every sequence where it was.
 *
 * A database that cannot be put back (its schema changed, it was closed, a connection stayed, a
 * statement failed) is closed or dropped as before, and the next test gets a new one. Kept
 * PostgreSQL databases are dropped when the test module ends.
 *
 * @module
 */
import type { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { type DatabaseHandle, embeddedHandle } from "../storage/database.ts";

/** Runs SQL on one database: `query` one statement, `run` several (one implicit transaction). */
export interface Session {
  query<T>(text: string): Promise<T[]>;
  run(text: string): Promise<void>;
}

/** The schema, described line by line: a database whose digest differs is not put back. */
const CATALOG_DIGEST = `select md5(string_agg(line, E'\\n' order by line)) from (
  select format('class %s %s %s %s %s %s', c.relname, c.relkind, c.relpersistence, c.relnatts,
      c.relrowsecurity, pg_get_expr(c.relpartbound, c.oid)) as line
    from pg_class c where c.relnamespace = 'public'::regnamespace
  union all select format('column %s.%s %s %s %s %s', c.relname, a.attname,
      format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity,
      pg_get_expr(d.adbin, d.adrelid))
    from pg_attribute a join pg_class c on c.oid = a.attrelid
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where c.relnamespace = 'public'::regnamespace and a.attnum > 0 and not a.attisdropped
  union all select format('index %s', pg_get_indexdef(i.indexrelid))
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where c.relnamespace = 'public'::regnamespace
  union all select format('constraint %s %s %s', conrelid::regclass, conname,
      pg_get_constraintdef(oid))
    from pg_constraint where connamespace = 'public'::regnamespace
  union all select format('trigger %s', pg_get_triggerdef(oid)) from pg_trigger
    where not tgisinternal
  union all select format('function %s %s', oid::regprocedure, md5(prosrc)) from pg_proc
    where pronamespace = 'public'::regnamespace
  union all select format('type %s %s', typname, typtype) from pg_type
    where typnamespace = 'public'::regnamespace
  union all select format('enum %s %s %s', enumtypid::regtype, enumsortorder, enumlabel)
    from pg_enum
  union all select format('view %s %s', c.relname, pg_get_viewdef(c.oid)) from pg_class c
    where c.relnamespace = 'public'::regnamespace and c.relkind in ('v', 'm')
  union all select format('rule %s', pg_get_ruledef(r.oid)) from pg_rewrite r
    join pg_class c on c.oid = r.ev_class
    where c.relnamespace = 'public'::regnamespace and r.rulename <> '_RETURN'
  union all select format('sequence %s %s %s %s %s %s', seqrelid::regclass, seqstart,
      seqincrement, seqmax, seqmin, seqcycle) from pg_sequence
  union all select format('policy %s %s', polrelid::regclass, polname) from pg_policy
  union all select format('schema %s', nspname) from pg_namespace
  union all select format('extension %s %s', extname, extversion) from pg_extension
  union all select format('setting %s', array_to_string(setconfig, ','))
    from pg_db_role_setting
    where setdatabase = (select oid from pg_database where datname = current_database())
) lines`;

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** A table's rows, in an order of their own, as one digest. */
const rowsDigest = (table: string) =>
  `(select md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) from ${
    quoted(table)
  } t)`;

/** A database as it was made: what putting one back compares with and restores. */
export class Pristine {
  private constructor(
    /** The state query's answer when made, by name. */
    private readonly state: Map<string, string>,
    /** The query of {@link state}: the catalog's digest, then each table and sequence. */
    private readonly stateQuery: string,
    /** Each table's tables that reference it, through foreign keys (TRUNCATE needs them too). */
    private readonly referencedBy: Map<string, string[]>,
    /** The rows of the tables that held some, as JSON arrays. */
    private readonly seeds: Map<string, string>,
    /** The query of {@link mark}. */
    private readonly markQuery: string,
  ) {}

  /**
   * What moves whenever a database is written: the next transaction id (any change of rows or
   * schema takes one; on PostgreSQL other databases' writes move it too) and every sequence
   * (`nextval` takes none). While it stays, the database is as it was.
   */
  async mark(session: Session): Promise<string> {
    const [{ mark }] = await session.query<{ mark: string }>(this.markQuery);
    return mark;
  }

  /** Reads a database just made (no test has touched it). */
  static async capture(session: Session): Promise<Pristine> {
    const relations = await session.query<{ name: string; kind: string }>(
      `select relname as name, relkind::text as kind from pg_class
       where relnamespace = 'public'::regnamespace and relkind in ('r', 'p', 'S')
         and not relispartition
       order by relname`,
    );
    const tables = relations.filter((r) => r.kind !== "S").map((r) => r.name);
    const sequences = relations.filter((r) => r.kind === "S").map((r) => r.name);
    const seeds = new Map<string, string>();
    if (tables.length > 0) {
      const counted = await session.query<{ name: string; rows: string | null }>(
        tables.map((table) =>
          `select ${literal(table)} as name,
             (select json_agg(t)::text from ${quoted(table)} t) as rows`
        ).join(" union all "),
      );
      for (const { name, rows } of counted) if (rows !== null) seeds.set(name, rows);
    }
    const parts = [`select 'catalog' as name, (${CATALOG_DIGEST}) as value`];
    for (const table of tables) {
      parts.push(
        `select ${literal(`table ${table}`)}, ${
          seeds.has(table)
            ? rowsDigest(table)
            : `case when exists (select 1 from ${quoted(table)}) then 'rows' else '' end`
        }`,
      );
    }
    const sequenceStates = sequences.map((sequence) =>
      `(select last_value || ' ' || is_called from ${quoted(sequence)})`
    );
    sequences.forEach((sequence, i) =>
      parts.push(`select ${literal(`sequence ${sequence}`)}, ${sequenceStates[i]}`)
    );
    const stateQuery = parts.join(" union all ");
    const markQuery = `select concat_ws(' ', pg_snapshot_xmax(pg_current_snapshot())::text${
      sequenceStates.map((state) => `, ${state}`).join("")
    }) as mark`;
    const edges = await session.query<{ child: string; parent: string }>(
      `select conrelid::regclass::text as child, confrelid::regclass::text as parent
       from pg_constraint where contype = 'f' and connamespace = 'public'::regnamespace`,
    );
    const referencedBy = new Map<string, string[]>();
    for (const { child, parent } of edges) {
      referencedBy.set(parent, [...referencedBy.get(parent) ?? [], child]);
    }
    const state = await readState(session, stateQuery);
    return new Pristine(state, stateQuery, referencedBy, seeds, markQuery);
  }

  /**
   * Puts a database back as it was made; false (nothing done) when its schema differs, and
   * throws when a statement fails: either way it cannot be used again.
   */
  async restore(session: Session): Promise<boolean> {
    const now = await readState(session, this.stateQuery);
    if (now.get("catalog") !== this.state.get("catalog")) return false;
    const emptied = new Set<string>();
    const empty = (table: string) => {
      if (emptied.has(table)) return;
      emptied.add(table);
      for (const child of this.referencedBy.get(table) ?? []) empty(child);
    };
    const statements: string[] = [];
    for (const [name, value] of now) {
      if (value === this.state.get(name)) continue;
      if (name.startsWith("table ")) empty(name.slice(6));
      else if (name.startsWith("sequence ")) {
        const [last, called] = this.state.get(name)!.split(" ");
        statements.push(
          `select setval(${literal(quoted(name.slice(9)))}, ${last}, ${called === "true"})`,
        );
      }
    }
    if (emptied.size > 0) {
      statements.unshift(`truncate table ${[...emptied].map(quoted).join(", ")}`);
      for (const table of emptied) {
        const rows = this.seeds.get(table);
        if (rows === undefined) continue;
        statements.push(
          `insert into ${quoted(table)} overriding system value
           select * from json_populate_recordset(null::${quoted(table)}, ${literal(rows)})`,
        );
      }
    }
    if (statements.length > 0) await session.run(statements.join(";\n"));
    return true;
  }
}

async function readState(session: Session, query: string): Promise<Map<string, string>> {
  const rows = await session.query<{ name: string; value: string | null }>(query);
  return new Map(rows.map(({ name, value }) => [name, value ?? ""]));
}

/** Databases of a kind kept at most: a test that opens more at once makes the rest anew. */
const KEPT = 2;

/**
 * Databases of one kind waiting for their next test, with what they were when made. `kind`:
 * the backend and where its migrations stopped.
 */
export class ReusePool<T extends object> {
  private readonly idle = new Map<string, T[]>();
  private readonly pristine = new Map<string, Promise<Pristine>>();
  /** Each database's {@link Pristine.mark} when made or last put back. */
  private readonly marks = new WeakMap<T, string>();

  /** One kept for `kind`, if any. */
  take(kind: string): T | undefined {
    return this.idle.get(kind)?.pop();
  }

  /**
   * Notes a database of `kind` just made, before any test uses it: the first of its kind is
   * read as {@link Pristine}.
   */
  async made(kind: string, item: T, session: Session): Promise<void> {
    let found = this.pristine.get(kind);
    if (!found) {
      found = Pristine.capture(session);
      this.pristine.set(kind, found);
      found.catch(() => this.pristine.delete(kind));
    }
    this.marks.set(item, await (await found).mark(session));
  }

  /**
   * Puts a closed database of `kind` back (through `session`) and keeps it; false when it cannot
   * be, or {@link KEPT} of its kind wait already: then the caller closes or drops it.
   */
  async giveBack(kind: string, item: T, session: Session): Promise<boolean> {
    const pristine = await this.pristine.get(kind)?.catch(() => undefined);
    if (!pristine || (this.idle.get(kind)?.length ?? 0) >= KEPT) return false;
    try {
      const mark = await pristine.mark(session);
      if (mark !== this.marks.get(item)) {
        if (!await pristine.restore(session)) return false;
        this.marks.set(item, await pristine.mark(session));
      }
    } catch {
      return false;
    }
    const list = this.idle.get(kind) ?? [];
    list.push(item);
    this.idle.set(kind, list);
    return true;
  }

  /** Every database kept, emptying the pool. */
  drain(): T[] {
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    return all;
  }
}

/** Embedded databases kept for the next test, by where their migrations stopped. */
const embeddedPool = new ReusePool<PGlite>();

/** A PostgreSQL database made for tests: where it is, and how to drop it. */
export interface MadeDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** PostgreSQL databases kept for the next test, dropped when the test module ends. */
const postgresPool = new ReusePool<MadeDatabase>();

/**
 * An embedded database of `kind`, kept or opened by `open`. Closing the handle puts it back, or
 * closes it.
 */
export async function keptEmbedded(
  kind: string,
  open: () => Promise<PGlite>,
): Promise<DatabaseHandle> {
  let pglite = embeddedPool.take(kind);
  if (!pglite) {
    pglite = await open();
    await embeddedPool.made(kind, pglite, embeddedSession(pglite));
  }
  const instance = pglite;
  return embeddedHandle(instance, async () => {
    if (instance.closed) return;
    const kept = await endSession(instance)
      .then((session) => embeddedPool.giveBack(kind, instance, session))
      .catch(() => false);
    if (!kept) await instance.close();
  });
}

/**
 * A PostgreSQL database of `kind`, kept or made by `make`; its `drop` puts it back, or drops it.
 */
export async function keptPostgres(
  kind: string,
  adminUrl: string,
  make: () => Promise<MadeDatabase>,
): Promise<{ url: string; drop(): Promise<void> }> {
  let made = postgresPool.take(kind);
  if (!made) {
    made = await make();
    const fresh = made;
    await withPostgresSession(made.url, (session) => postgresPool.made(kind, fresh, session));
  }
  const copy = made;
  return {
    url: copy.url,
    drop: async () => {
      const kept = await withPostgresSession(copy.url, async (session) => {
        if (await otherSessions(session)) return false;
        return await postgresPool.giveBack(kind, copy, session);
      }).catch(() => false);
      if (kept) dropAtExit(adminUrl);
      else await copy.drop();
    },
  };
}

function embeddedSession(pglite: PGlite): Session {
  return {
    query: async <T>(text: string) => (await pglite.query<T>(text)).rows,
    run: async (text) => void await pglite.exec(text),
  };
}

/** A PGlite's one session as a new one: no transaction, no setting, no prepared statement. */
async function endSession(pglite: PGlite): Promise<Session> {
  try {
    await pglite.exec("discard all");
  } catch {
    // A transaction was left open (a test that failed half-way).
    await pglite.exec("rollback; discard all");
  }
  return embeddedSession(pglite);
}

/** Runs `work` on a connection of its own to `url`. */
async function withPostgresSession<T>(url: string, work: (session: Session) => Promise<T>) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await work({
      query: async <T>(text: string) => (await sql.unsafe(text)) as T[],
      run: async (text) => void await sql.unsafe(text).simple(),
    });
  } finally {
    await sql.end();
  }
}

/**
 * Whether connections other than `session`'s are open on its database: a closed pool's take a
 * moment to go, a test's own (a server it started) may not.
 */
async function otherSessions(session: Session): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const [{ count }] = await session.query<{ count: number }>(
      `select count(*)::int as count from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid()`,
    );
    if (count === 0) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

let dropping = false;

/**
 * Drops the PostgreSQL databases kept when this test module ends. `unload` waits for nothing
 * asynchronous, so a `deno run` of `drop_databases.ts` does it while this one waits.
 */
function dropAtExit(adminUrl: string): void {
  if (dropping) return;
  dropping = true;
  globalThis.addEventListener("unload", () => {
    const names = postgresPool.drain().map((made) => made.name);
    if (names.length === 0) return;
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-check",
        "--cached-only",
        `--config=${new URL("../../deno.json", import.meta.url).pathname}`,
        "--allow-net",
        "--allow-env",
        "--allow-read",
        new URL("./drop_databases.ts", import.meta.url).pathname,
        adminUrl,
        ...names,
      ],
      stdin: "null",
      stdout: "null",
    }).outputSync();
  });
}
