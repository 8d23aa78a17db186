/**
 * Lists that can be long (projects, probes) are paged by their procedures (`limit`, `after`,
 * `meta.next_after`), and answered whole by streaming: REST, and a single `/trpc` call, walk
 * the pages through the procedure (so every page's output is validated) and write each page as
 * it comes, never holding more than a page or two. The text is the same as the whole list's
 * `JSON.stringify` would be: `{"data":[…],"meta":{"count":n,"next_after":null}}`.
 *
 * A paged list says so in its procedure's meta (`paged: true`, `server/procedures/init.ts`).
 *
 * @module
 */
import type { Page } from "../domain/pages.ts";
import { type ItemMeter, itemMeter } from "./answer_size.ts";
import type { Context } from "./context.ts";

/** Tells the server layer (`server/edge/serve.ts`) to send a body as it comes. */
export const STREAMED = { "transfer-encoding": "chunked" };

/** How many items a streamed list reads at a time. */
export const STREAM_PAGE_SIZE = 500;

/**
 * Stored characters after which a streamed page of big items may end early
 * (`Context.listPageChars`): 500 probes of ~400 KB are never read as one page.
 */
export const STREAM_PAGE_CHARS = 1024 * 1024;

/** A streamed list is sent in parts of about this many characters. */
const STREAM_CHUNK = 64 * 1024;

/** The answer of a procedure for a page: its rows, their count and the next page's cursor. */
export function pageAnswer<T>(page: Page<T>) {
  return { data: page.rows, meta: { count: page.rows.length, next_after: page.next } };
}

/**
 * What a list's items are counted with as they are read (`itemMeter`): against what its batch may
 * still build, or its single answer's limit; undefined when its answer is not bounded (streamed).
 */
export function listMeter(ctx: Context): ItemMeter | undefined {
  const budget = ctx.answerBudget;
  if (budget) return itemMeter(budget.remaining, budget.maxBytes);
  return ctx.answerLimit === undefined ? undefined : itemMeter(ctx.answerLimit, ctx.answerLimit);
}

interface ListPage {
  data: unknown[];
  meta: { next_after: string | null };
}

/**
 * The whole list, as a stream of `prefix`, the list's JSON and `suffix`. The first page is read
 * before this resolves, so a failure there (a wrong cursor, the database down) rejects and can
 * be answered with its status; a later failure is told to `onError` and errors the stream (the
 * connection is cut: a truncated body is never taken for a whole one).
 */
export async function streamList<C extends Pick<Context, "listPageChars"> | null>(
  { call, ctx, path, input, prefix = "", suffix = "", onError, pageSize = STREAM_PAGE_SIZE }: {
    call: (ctx: C, path: readonly string[], input: unknown) => Promise<unknown>;
    ctx: C;
    path: readonly string[];
    /** The call's input; its `after`, when given, is where the walk starts. */
    input: Record<string, unknown>;
    prefix?: string;
    suffix?: string;
    onError: (error: unknown) => void;
    pageSize?: number;
  },
): Promise<ReadableStream<Uint8Array>> {
  // The walk's pages are its own: a list of big items may end one early, with its cursor.
  const walk = ctx === null ? ctx : { ...ctx, listPageChars: STREAM_PAGE_CHARS };
  const read = (after: unknown) =>
    call(walk, path, { ...input, limit: pageSize, after }) as Promise<ListPage>;
  let page = await read(input.after);
  let count = 0;
  let text = `${prefix}{"data":[`;
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (const item of page.data) {
        text += (count++ === 0 ? "" : ",") + JSON.stringify(item);
        // A page of big items is sent in parts as it is written, never held as one string.
        if (text.length >= STREAM_CHUNK) {
          controller.enqueue(encoder.encode(text));
          text = "";
        }
      }
      const next = page.meta.next_after;
      if (next === null) {
        text += `],"meta":${JSON.stringify({ count, next_after: null })}}${suffix}`;
      }
      controller.enqueue(encoder.encode(text));
      text = "";
      if (next === null) return controller.close();
      try {
        page = await read(next);
      } catch (error) {
        onError(error);
        controller.error(error);
      }
    },
  });
}
