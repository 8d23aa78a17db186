import { z } from "zod";

/** The earliest instant a time input may name. */
export const MIN_INSTANT = "1970-01-01T00:00:00.000Z";
/**
 * The latest: a year short of the end of 9999, so what the service adds to a time it was sent (a
 * maintenance window's 366 days, a stale time, a reminder) still has a four-digit year, the only
 * years both PostgreSQL and JavaScript's `toISOString` write and read alike.
 */
export const MAX_INSTANT = "9998-12-31T23:59:59.999Z";

const MIN_MS = Date.parse(MIN_INSTANT);
const MAX_MS = Date.parse(MAX_INSTANT);

/** Whether `ms` (since the epoch) lies from {@link MIN_INSTANT} to {@link MAX_INSTANT}. */
export const inInstantRange = (ms: number) => ms >= MIN_MS && ms <= MAX_MS;

const FIELDS = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:Z|([+-])(\d\d):(\d\d))$/;

/**
 * The instant (ms since the epoch) a time in `instant`'s format names, its fraction cut to the
 * millisecond; NaN for any other text. Read field by field because `Date.parse` is not exact:
 * V8 misreads fractions of more than nine digits that start with zeros
 * (`00:00:00.0000000000999999999Z` as 999 ms).
 */
export function instantMs(text: string): number {
  const m = FIELDS.exec(text);
  if (!m) return NaN;
  const [, year, month, day, hour, minute, second, fraction = "", sign, offsetH, offsetM] = m;
  const at = new Date(0);
  // Not Date.UTC: it reads years 0–99 as 1900–1999.
  at.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  at.setUTCHours(
    Number(hour),
    Number(minute),
    Number(second),
    Number(fraction.slice(0, 3).padEnd(3, "0")),
  );
  const offset = sign === undefined
    ? 0
    : (sign === "-" ? -1 : 1) * (Number(offsetH) * 60 + Number(offsetM)) * 60_000;
  return at.getTime() - offset;
}

/**
 * Every time a client sends: ISO 8601 with seconds and an offset (`Z` or `±hh:mm`; a time without
 * one would be ambiguous), any number of fractional digits, naming an instant from
 * {@link MIN_INSTANT} to {@link MAX_INSTANT} once its offset is applied; anything else is a 422
 * naming the field, never a database error. It reaches the service as that instant in UTC to the
 * millisecond (`2031-03-01T08:00:00.000Z`), the one form `new Date` reads exactly.
 */
export const instant = z.iso.datetime({ offset: true, abort: true })
  .refine((text) => inInstantRange(instantMs(text)), {
    message: `must lie between ${MIN_INSTANT} and ${MAX_INSTANT} once its offset is applied`,
    abort: true,
  })
  .overwrite((text) => new Date(instantMs(text)).toISOString());
