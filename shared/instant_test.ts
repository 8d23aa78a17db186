/**
 * The one time input (`instant`): every ISO 8601 form its format takes, years 0000 to 9999 and
 * offsets -23:59 to +23:59, is accepted exactly when the instant it names lies in the documented
 * range, and is then read as `Date.parse` reads it. Checked on the schema alone, then through the
 * real handler on every time input (`before`, a maintenance window's times, a posted result's
 * `started_at`) on both databases: inside the range the service stores or compares that instant,
 * outside it answers 422 naming the field and changes nothing, never a 500.
 *
 * Environment: FUZZ_RUNS (runs per property through the handler; 60), FUZZ_SEED (to replay).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type Answer, apiSuite, type TestClient, uniqueName } from "../server/testing/app.ts";
import { startTarget, type Target } from "../server/testing/target_server.ts";
import { instant, instantMs, MAX_INSTANT, MIN_INSTANT } from "./instant.ts";

const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 60);
const SEED = Deno.env.get("FUZZ_SEED") ? Number(Deno.env.get("FUZZ_SEED")) : undefined;
const params = { numRuns: RUNS, seed: SEED, endOnFailure: true };

const MIN_MS = Date.parse(MIN_INSTANT);
const MAX_MS = Date.parse(MAX_INSTANT);
const DAY_MS = 86_400_000;
const inRange = (ms: number) => ms >= MIN_MS && ms <= MAX_MS;

/** A time as a client writes it: local fields, a fraction as written, an offset or `Z`. */
interface Written {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** The fractional digits after the point; null: none written. */
  fraction: string | null;
  /** `Z`, or the sign and the minutes (0 to 23:59) of `±hh:mm`. */
  offset: "Z" | { sign: 1 | -1; minutes: number };
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

function textOf(w: Written): string {
  const offset = w.offset === "Z"
    ? "Z"
    : `${w.offset.sign < 0 ? "-" : "+"}${pad(Math.floor(w.offset.minutes / 60))}:${
      pad(w.offset.minutes % 60)
    }`;
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${
    pad(w.second)
  }${w.fraction === null ? "" : `.${w.fraction}`}${offset}`;
}

/**
 * The instant `w` names: `Date.parse` of it with its fraction cut to the millisecond (it misreads
 * longer fractions that start with zeros).
 */
const instantOf = (w: Written) =>
  Date.parse(textOf({ ...w, fraction: w.fraction === null ? null : w.fraction.slice(0, 3) }));

const leap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const daysIn = (y: number, m: number) =>
  m === 2 ? (leap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

const offsetArb: fc.Arbitrary<Written["offset"]> = fc.oneof(
  fc.constant("Z" as const),
  fc.record({
    sign: fc.constantFrom(1 as const, -1 as const),
    minutes: fc.oneof(fc.integer({ min: 0, max: 23 * 60 + 59 }), fc.constantFrom(0, 23 * 60 + 59)),
  }),
);
const digits = (min: number, max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max })
    .map((d) => d.join(""));
/** Fractions of any length, often starting with zeros. */
const fractionArb = fc.oneof(
  digits(1, 12),
  fc.tuple(fc.integer({ min: 1, max: 12 }), digits(1, 12)).map(([n, d]) => "0".repeat(n) + d),
);

/** Any time the format takes: any real date of years 0000–9999, any offset, any fraction. */
const anywhere: fc.Arbitrary<Written> = fc.record({
  year: fc.integer({ min: 0, max: 9999 }),
  month: fc.integer({ min: 1, max: 12 }),
  dayOfMonth: fc.integer({ min: 1, max: 31 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 }),
  second: fc.integer({ min: 0, max: 59 }),
  fraction: fc.option(fractionArb),
  offset: offsetArb,
}).map(({ dayOfMonth, ...w }) => ({ ...w, day: Math.min(dayOfMonth, daysIn(w.year, w.month)) }));

/** The instant `ms` written with `offset`, to the millisecond, then `extra` digits. */
function writtenAt(ms: number, offset: Written["offset"], extra: string): Written {
  const local = new Date(ms + (offset === "Z" ? 0 : offset.sign * offset.minutes * 60_000));
  const millis = local.getUTCMilliseconds();
  return {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
    fraction: millis === 0 && extra === "" ? null : pad(millis, 3) + extra,
    offset,
  };
}

/** Times within `spanMs` of `at` (and within a few ms of it, half the time), any offset. */
const near = (at: number, spanMs: number): fc.Arbitrary<Written> =>
  fc.record({
    delta: fc.oneof(fc.integer({ min: -spanMs, max: spanMs }), fc.integer({ min: -3, max: 3 })),
    offset: offsetArb,
    extra: digits(0, 9),
  }).map(({ delta, offset, extra }) => writtenAt(at + delta, offset, extra));

/** Anywhere, and at both ends of the range (where an offset moves a time in or out). */
const times = fc.oneof(anywhere, near(MIN_MS, 2 * DAY_MS), near(MAX_MS, 2 * DAY_MS));

Deno.test("instant: the forms the format takes are accepted exactly inside the range, as Date.parse reads them", () => {
  fc.assert(
    fc.property(times, (w) => {
      const text = textOf(w);
      const ms = instantOf(w);
      assert.equal(instantMs(text), ms, text);
      if ((w.fraction ?? "").length <= 9) assert.equal(Date.parse(text), ms, text);
      const parsed = instant.safeParse(text);
      assert.equal(parsed.success, inRange(ms), text);
      if (parsed.success) assert.equal(parsed.data, new Date(ms).toISOString(), text);
      else {
        assert.equal(parsed.error.issues.length, 1, text);
        assert.match(parsed.error.issues[0].message, /^must lie between /, text);
      }
    }),
    { numRuns: 20_000, seed: SEED },
  );
  for (const text of ["1969-12-31T23:59:59.9999Z", "9999-01-01T00:00:00Z"]) {
    assert.equal(instant.safeParse(text).success, false, text);
  }
  for (const text of ["1970-01-01T00:00:00.0009+00:00", "9998-12-31T23:59:59.9999999Z"]) {
    assert.equal(instant.safeParse(text).success, true, text);
  }
  assert.equal(
    instant.parse("2000-01-01T00:00:00.0000000000999999999Z"),
    "2000-01-01T00:00:00.000Z",
  );
});

/** A 422 whose details name `field` (and nothing but 422: never a 500). */
function assertRefused(res: Answer, field: string) {
  assert.equal(res.status, 422, res.text);
  assert.ok(
    res.body.error.details.some((d: { path: string }) => d.path === field),
    `${field} named: ${res.text}`,
  );
}

/** A project with one probe of `target`, run from `locations` (the built-in runner's if absent). */
async function probeOf(api: TestClient, target: Target, project: string, locations?: string[]) {
  const res = await api.post(`/api/v1/projects/${project}/probes`, {
    url: `${target.origin}/ok?${uniqueName("q")}`,
    ...(locations && { locations }),
  });
  assert.equal(res.status, 201, res.text);
  return res.body.data.probe_id as string;
}

apiSuite("time inputs", (test) => {
  test("results: before is compared as the instant it names; outside the range 422", async ({ api }) => {
    const target = await startTarget();
    try {
      const project = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const path = `/api/v1/projects/${project}/probes/${await probeOf(api, target, project)}`;
      const run = await api.post(`${path}/run`);
      assert.equal(run.status, 200, run.text);
      const ran = Date.parse(run.body.data.started_at);
      await fc.assert(
        fc.asyncProperty(fc.oneof(times, near(ran, 2 * DAY_MS)), async (w) => {
          const text = textOf(w);
          const res = await api.get(`${path}/results?before=${encodeURIComponent(text)}`);
          if (!inRange(instantOf(w))) return assertRefused(res, "before");
          assert.equal(res.status, 200, `${text}: ${res.text}`);
          // The one result is older than `before` exactly when it started before that instant.
          assert.equal(res.body.data.length, ran < instantOf(w) ? 1 : 0, text);
        }),
        params,
      );
      const trpc = await api.get(
        `/trpc/results.list?input=${
          encodeURIComponent(JSON.stringify({
            project,
            probeId: path.split("/").pop(),
            before: "0000-01-01T00:00:00+14:00",
          }))
        }`,
      );
      assert.equal(trpc.status, 422, trpc.text);
    } finally {
      await target.close();
    }
  });

  test("maintenance: starts_at and ends_at are stored as the instants they name; outside the range 422", async ({ api }) => {
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const windows = `/api/v1/projects/${project}/maintenance`;
    const ends = (w: Written) =>
      fc.record({
        length: fc.oneof(
          fc.integer({ min: 1, max: 366 * DAY_MS }),
          fc.constantFrom(366 * DAY_MS, 366 * DAY_MS + 1, 0, -1),
        ),
        offset: offsetArb,
        extra: digits(0, 4),
      }).map(({ length, offset, extra }) => writtenAt(instantOf(w) + length, offset, extra));
    const pairs = times.chain((from) => fc.oneof(ends(from), times).map((to) => ({ from, to })));
    await fc.assert(
      fc.asyncProperty(pairs, async ({ from, to }) => {
        const [starts, ending] = [instantOf(from), instantOf(to)];
        const body = { starts_at: textOf(from), ends_at: textOf(to) };
        const res = await api.post(windows, body);
        const label = JSON.stringify(body);
        if (!inRange(starts)) assertRefused(res, "starts_at");
        if (!inRange(ending)) assertRefused(res, "ends_at");
        if (!inRange(starts) || !inRange(ending)) {
          // Refused, and nothing stored.
        } else if (ending <= starts || ending - starts > 366 * DAY_MS) {
          assertRefused(res, "ends_at");
        } else {
          assert.equal(res.status, 201, `${label}: ${res.text}`);
          const stored = {
            starts_at: new Date(starts).toISOString(),
            ends_at: new Date(ending).toISOString(),
          };
          assert.deepEqual(
            { starts_at: res.body.data.starts_at, ends_at: res.body.data.ends_at },
            stored,
            label,
          );
          const listed = await api.get(windows);
          assert.deepEqual(
            listed.body.data.map((m: Record<string, string>) => ({
              starts_at: m.starts_at,
              ends_at: m.ends_at,
            })),
            [stored],
            label,
          );
          assert.equal((await api.delete(`${windows}/${res.body.data.id}`)).status, 204);
        }
        assert.equal((await api.get(windows)).body.meta.count, 0, label);
      }),
      params,
    );
  });

  test("runner results: started_at is recorded as the instant it names, outside the range 422; a run id due outside it 409", async ({ api }) => {
    const target = await startTarget();
    try {
      const name = uniqueName("loc");
      const created = await api.post("/api/v1/locations", { name });
      assert.equal(created.status, 201, created.text);
      const token = created.body.data.token as string;
      const project = uniqueName();
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const probes = new Map<string, string>();
      for (let i = 0; i < 4; i++) {
        const id = await probeOf(api, target, project, [name]);
        const probe = await api.get(`/api/v1/projects/${project}/probes/${id}`);
        probes.set(probe.body.data.url, id);
      }
      const who = { runner: "r1", version: "test-1" };
      const claimed = await api.post("/api/v1/runner/claim", {
        ...who,
        wait_seconds: 0,
        max: 1000,
      }, { key: token });
      assert.equal(claimed.status, 200, claimed.text);
      const runs = (claimed.body.data.runs as { run_id: string; url: string }[])
        .filter((r) => probes.has(r.url));
      assert.equal(runs.length, probes.size);
      const post = (runId: string, startedAt: string) =>
        api.post("/api/v1/runner/results", {
          ...who,
          results: [{
            run_id: runId,
            started_at: startedAt,
            duration_ms: 5,
            outcome: "up",
            http_status: 200,
            error: null,
            address: "127.0.0.1",
            failed_checks: null,
          }],
        }, { key: token });
      // Each probe's run posted once, as of now in any offset: recorded at that very instant.
      const forms = fc.sample(fc.tuple(offsetArb, digits(0, 6)), {
        numRuns: runs.length,
        seed: SEED,
      });
      for (const [run, [offset, extra]] of runs.map((r, i) => [r, forms[i]] as const)) {
        const w = writtenAt(Date.now(), offset, extra);
        const text = textOf(w);
        const res = await post(run.run_id, text);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.data.recorded, 1, `${text}: ${res.text}`);
        const results = await api.get(
          `/api/v1/projects/${project}/probes/${probes.get(run.url)}/results`,
        );
        assert.equal(results.body.data[0].started_at, new Date(instantOf(w)).toISOString(), text);
      }
      // Any other time: a 422 naming the field outside the range; inside it, an answer per result.
      await fc.assert(
        fc.asyncProperty(times, async (w) => {
          const res = await post(runs[0].run_id, textOf(w));
          if (!inRange(instantOf(w))) return assertRefused(res, "results.0.started_at");
          assert.equal(res.status, 200, `${textOf(w)}: ${res.text}`);
        }),
        params,
      );
      // The due time a run id carries (ms, up to 16 digits; another one for a run made during an
      // outage): outside the range it names no run this location was given, so 409 naming it.
      const [claim, key] = runs[0].run_id.split(".");
      const dues = fc.oneof(
        fc.bigInt({ min: 0n, max: 9_999_999_999_999_999n }),
        fc.bigInt({ min: BigInt(MAX_MS) - 2n, max: BigInt(MAX_MS) + 2n }),
      );
      await fc.assert(
        fc.asyncProperty(dues, fc.boolean(), async (due, outage) => {
          const runId = `${claim}.${key}.${due}.0${outage ? ".o" : ""}`;
          const res = await post(runId, new Date().toISOString());
          if (due > BigInt(MAX_MS)) {
            assert.equal(res.status, 409, `${runId}: ${res.text}`);
            assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), [
              "results.0.run_id",
            ]);
          } else assert.equal(res.status, 200, `${runId}: ${res.text}`);
        }),
        params,
      );
    } finally {
      await target.close();
    }
  });
});
