/**
 * Answers of vendors that say how long to wait in a 429's JSON body rather than (or besides) a
 * `Retry-After` header: Telegram (`parameters.retry_after`, seconds), Matrix (`retry_after_ms`).
 *
 * @module
 */
import { type HttpAnswer, httpVerdict, MAX_RETRY_AFTER_MS, type Verdict } from "../provider.ts";

/**
 * The usual verdict ({@link httpVerdict}), a 429's wait read from its body by `waitMs` when the
 * headers name none.
 */
export function bodyRetryAfter(
  waitMs: (body: unknown) => unknown,
): (answer: HttpAnswer, now: Date) => Verdict {
  return (answer, now) => {
    const verdict = httpVerdict(answer, now);
    if (
      verdict.outcome !== "retry" || answer.status !== 429 || verdict.retryAfterMs !== undefined
    ) {
      return verdict;
    }
    let ms: unknown;
    try {
      ms = waitMs(JSON.parse(answer.body));
    } catch {
      return verdict;
    }
    return typeof ms === "number" && Number.isFinite(ms) && ms >= 0
      ? { ...verdict, retryAfterMs: Math.min(ms, MAX_RETRY_AFTER_MS) }
      : verdict;
  };
}
