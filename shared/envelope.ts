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
