// The ping batcher with two batches in flight (as on PostgreSQL) and small batches, on each
// database: pings of several heartbeats sent at once are each counted once, unknown tokens are
// told so, and each heartbeat's pings are applied in the order they came, whichever batch took
// them.
import assert from "node:assert/strict";
import type { PingKind } from "@probe/shared";
import { backends } from "../../testing/app.ts";
import {
  heartbeatApp,
  heartbeatsPath,
  newHeartbeat,
  newProject,
} from "../../testing/heartbeats.ts";
import { sql } from "kysely";
import { createLogger } from "../../base/log.ts";
import { createPingBatcher } from "./batcher.ts";
import type { Ping } from "./pings.ts";

const KINDS: PingKind[] = ["start", "success", "log", "start", "fail", "success", "start"];

for (const backend of backends()) {
  Deno.test(`ping batches in flight together keep each heartbeat's order [${backend}]`, async () => {
    const { app, api } = await heartbeatApp(backend);
    const batcher = createPingBatcher({
      db: app.database.db,
      log: createLogger("silent"),
      maxInFlight: 2,
      maxBatch: 3,
    });
    try {
      const project = await newProject(api);
      const made = await Promise.all(
        ["a", "b", "c", "d"].map((name) =>
          newHeartbeat(api, project, { name, period_seconds: 3600, grace_seconds: 3600 })
        ),
      );
      const tokens = made.map((hb) => new URL(hb.ping_url).pathname.split("/").at(-1)!);
      const unknown = "x".repeat(32);
      const start = Date.now() - 60_000;
      let at = start;
      const ping = (token: string, kind: PingKind): Ping => ({
        token,
        at: at += 10,
        kind,
        exitCode: null,
        method: "GET",
        address: null,
        body: null,
        bodyBytes: 0,
      });
      // Each round's pings together, the next round a turn later: batches overlap in time.
      const answers: Promise<boolean | null>[][] = tokens.map(() => []);
      const strangers: Promise<boolean | null>[] = [];
      for (const kind of KINDS) {
        tokens.forEach((token, i) => answers[i].push(batcher.submit(ping(token, kind))));
        strangers.push(batcher.submit(ping(unknown, "success")));
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      await batcher.drain();
      for (const each of answers) assert.deepEqual(await Promise.all(each), KINDS.map(() => true));
      assert.deepEqual(await Promise.all(strangers), KINDS.map(() => false));

      for (const hb of made) {
        const read = (await api.get(heartbeatsPath(project, hb.name))).body.data;
        assert.equal(read.pings_total, KINDS.length);
        assert.equal(read.last_ping_kind, KINDS.at(-1));
        const kept = (await api.get(`${heartbeatsPath(project, hb.name)}/pings`)).body.data;
        // The latest first: numbered in the order they came, each kind in its place.
        assert.deepEqual(
          kept.map((p: { n: number; kind: string }) => [p.n, p.kind]),
          KINDS.map((kind, i) => [i + 1, kind]).reverse(),
        );
        const times = kept.map((p: { at: string }) => Date.parse(p.at));
        assert.deepEqual(times, [...times].sort((x, y) => y - x));
      }
    } finally {
      await batcher.drain();
      await app.close();
    }
  });
}

for (const backend of backends()) {
  // The common batch's writes are not waited for before its COMMIT (`recordPingBatch`): their
  // failure must still fail the batch, and leave nothing of it.
  Deno.test(`a batch whose writes fail acknowledges none of its pings [${backend}]`, async () => {
    const { app, api } = await heartbeatApp(backend);
    const db = app.database.db;
    const batcher = createPingBatcher({ db, log: createLogger("silent"), maxBatch: 10 });
    try {
      const project = await newProject(api);
      const hb = await newHeartbeat(api, project, {
        name: "a",
        period_seconds: 3600,
        grace_seconds: 3600,
      });
      const token = new URL(hb.ping_url).pathname.split("/").at(-1)!;
      const ping = (body: string | null): Ping => ({
        token,
        at: Date.now(),
        kind: "success",
        exitCode: null,
        method: "POST",
        address: null,
        body,
        bodyBytes: body?.length ?? 0,
      });
      // Up first: the next success moves no state, the batch whose writes go with the COMMIT.
      assert.equal(await batcher.submit(ping(null)), true);
      await sql`create function refuse_ping() returns trigger language plpgsql as $$
        begin
          if new.body = 'refused' then raise exception 'refused' using errcode = '23514'; end if;
          return new;
        end $$`.execute(db);
      await sql`create trigger refuse_ping before insert on heartbeat_pings
        for each row execute function refuse_ping()`.execute(db);
      await assert.rejects(batcher.submit(ping("refused")), /refused/);
      assert.equal(await batcher.submit(ping("taken")), true);
      const read = (await api.get(heartbeatsPath(project, hb.name))).body.data;
      assert.equal(read.pings_total, 2);
      const kept = (await api.get(`${heartbeatsPath(project, hb.name)}/pings`)).body.data;
      assert.deepEqual(kept.map((p: { n: number; body: string | null }) => [p.n, p.body]), [
        [2, "taken"],
        [1, null],
      ]);
    } finally {
      await batcher.drain();
      await app.close();
    }
  });
}
