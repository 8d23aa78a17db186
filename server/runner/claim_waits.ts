/**
 * How many claims a remote location's runners may have open at once, and how a claim waits for
 * due runs without holding a database connection (docs/locations.md, "Claims" and "Bounds").
 *
 * - **Open claims**: at most `CLAIMS_PER_LOCATION` claims of one location are open at once on this
 *   service instance (a location has one token, so this bounds the token too). One claim past it
 *   is refused at once, before any database work, with 429 and `Retry-After`: a token is meant for
 *   a few runners, each with one claim in flight. The open ones go to the database one at a time
 *   (`turn`): a burst of claims of one location takes one connection, never the pool.
 * - **Waiting**: a claim that found nothing due waits here, on no connection. One poll, every
 *   `pollMs` while any claim waits, asks the database in one statement which of the locations with
 *   waiting claims have a run due (`dueLocations`), however many claims wait. For each that has,
 *   the claim that has waited longest is woken to claim; the next one only when that claim took
 *   as many runs as it asked for (more may be due). So a flood of waiting claims costs the
 *   database one cheap statement a second, and a due run wakes one claim, not all.
 *
 * @module
 */
import { sql } from "kysely";
import { type Db, withBudget } from "../storage/database.ts";
import { TooManyRequests } from "../domain/errors.ts";
import { sleep } from "../base/sleep.ts";

/** Claims of one location open at once on an instance: a token is meant for a few runners. */
export const CLAIMS_PER_LOCATION = 32;
/** When a claim refused for the bound may come back: a waiting claim ends within 25 s. */
export const CLAIM_RETRY_AFTER_SECONDS = 5;

/** Too many claims of one location at once: 429 with `Retry-After`. */
const tooManyClaims = (limit: number) =>
  new TooManyRequests(
    `This location has ${limit} claims open already, the most it may: ` +
      "each of its runners needs one at a time",
    CLAIM_RETRY_AFTER_SECONDS,
  );

export interface ClaimWaits {
  /**
   * Opens a claim of `location`, or throws `TooManyRequests` (429) past the bound; answers the function
   * that closes it (call it once the claim is answered).
   */
  open(location: string): () => void;
  /**
   * Waits until a run may be due at `location` (true), or until `until` or an abort (false),
   * holding no database connection.
   */
  wait(location: string, until: number, signal?: AbortSignal): Promise<boolean>;
  /** Wakes the next waiting claim of `location`: the last one took all it asked for. */
  wakeNext(location: string): void;
  /**
   * Runs `work` (a claim's transaction) once the claims of `location` before it are done: one at
   * a time per location, since they would only compete for the same rows.
   */
  turn<T>(location: string, work: () => Promise<T>): Promise<T>;
}

export interface ClaimWaitsOptions {
  db: Db;
  /** How often the waiting claims' poll asks the database. */
  pollMs: number;
  now: () => number;
  /** Run before each poll: new probes' schedule rows, so waiting claims see them. */
  beforePoll?: () => Promise<void>;
}

interface Waiter {
  wake(due: boolean): void;
}

export function createClaimWaits(
  { db, pollMs, now, beforePoll }: ClaimWaitsOptions,
): ClaimWaits {
  const open = new Map<string, number>();
  /** Each location's waiting claims, the longest waiting first. */
  const waiting = new Map<string, Waiter[]>();
  let polling = false;
  /** Each location's last claim transaction, done or to come: the next one goes after it. */
  const turns = new Map<string, Promise<unknown>>();

  function wakeNext(location: string) {
    waiting.get(location)?.[0]?.wake(true);
  }

  /** One poll for every location with waiting claims, while there are any. */
  async function poll() {
    polling = true;
    try {
      while (waiting.size > 0) {
        await sleep(pollMs);
        if (waiting.size === 0) break;
        let due: string[];
        try {
          await beforePoll?.();
          due = await dueLocations(db, [...waiting.keys()], now());
        } catch {
          // The database cannot answer now: the claims wait on, and end empty at their time.
          continue;
        }
        for (const location of due) wakeNext(location);
      }
    } finally {
      polling = false;
    }
  }

  return {
    open(location) {
      const count = open.get(location) ?? 0;
      if (count >= CLAIMS_PER_LOCATION) throw tooManyClaims(CLAIMS_PER_LOCATION);
      open.set(location, count + 1);
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        const left = (open.get(location) ?? 1) - 1;
        if (left > 0) open.set(location, left);
        else open.delete(location);
      };
    },

    wait(location, until, signal) {
      return new Promise<boolean>((resolve) => {
        if (signal?.aborted || now() >= until) return resolve(false);
        const queue = waiting.get(location) ?? [];
        waiting.set(location, queue);
        const waiter: Waiter = {
          wake(due) {
            clearTimeout(timer);
            signal?.removeEventListener("abort", gone);
            const at = queue.indexOf(waiter);
            if (at >= 0) queue.splice(at, 1);
            if (queue.length === 0 && waiting.get(location) === queue) waiting.delete(location);
            resolve(due);
          },
        };
        const gone = () => waiter.wake(false);
        const timer = setTimeout(gone, Math.max(0, until - now()));
        signal?.addEventListener("abort", gone, { once: true });
        queue.push(waiter);
        if (!polling) void poll();
      });
    },

    wakeNext,

    turn(location, work) {
      const mine = (turns.get(location) ?? Promise.resolve()).then(work);
      const done = mine.then(() => {}, () => {});
      turns.set(location, done);
      void done.then(() => {
        if (turns.get(location) === done) turns.delete(location);
      });
      return mine;
    },
  };
}

/**
 * Which of `locations` have a run a claim would take now (`claimDue`'s condition: due within the
 * next second, no live lease): one statement, an index probe per location.
 */
async function dueLocations(db: Db, locations: string[], at: number): Promise<string[]> {
  const { rows } = await sql<{ location: string }>`
    select l.location from unnest(${locations}::text[]) as l(location)
    where exists (
      select 1 from probe_schedule s
      where s.location = l.location and s.next_due_at <= ${new Date(at + 1000).toISOString()}
        and (s.lease_until is null or s.lease_until < ${new Date(at).toISOString()}))`
    .execute(withBudget(db, "remoteRuns"));
  return rows.map((r) => r.location);
}
