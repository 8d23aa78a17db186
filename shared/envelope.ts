import { z } from "zod";

/** `{ data }`: the envelope of every successful answer. */
export const dataOf = <T extends z.ZodType>(data: T) => z.object({ data });

/** `{ data, meta }`: the envelope of answers that also carry metadata. */
export const dataWithMeta = <T extends z.ZodType, M extends z.ZodType>(data: T, meta: M) =>
  z.object({ data, meta });

export const countMeta = z.object({ count: z.int() });

/** The body of every non-2xx answer. */
export const errorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});
export type ErrorBody = z.infer<typeof errorBody>;
export type ErrorDetail = NonNullable<ErrorBody["error"]["details"]>[number];

/** The most items one page of a list holds. */
export const MAX_PAGE_LIMIT = 1000;

/**
 * Paging of the lists that can be long (projects, probes): `limit` asks for one page of at most
 * that many items, `after` continues after the page that answered it with `next_after`. Without
 * `limit`, REST and a single `/trpc` call stream the whole list.
 */
export const pageQuery = {
  // Query strings arrive as text: numbers are coerced explicitly.
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).optional().describe(
    `One page of at most this many items (1 to ${MAX_PAGE_LIMIT}); without it, the whole list.`,
  ),
  after: z.string().min(1).max(4096).optional().describe(
    "Continue after the page that answered this `meta.next_after`.",
  ),
};

export const pageMeta = z.object({
  count: z.int(),
  /** Pass as `after` for the next page; null on the last page and on a whole list. */
  next_after: z.string().nullable(),
});
