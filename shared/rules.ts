/**
 * The shared rules that need no schema: the kinds' URL forms, what counts as a credential, and
 * how much of what a run saw a failed check keeps. The probe thread imports them from here
 * (`@probe/shared/rules`) rather than from the package's root, which builds every zod schema:
 * an isolate of its own pays for each module it loads (`server/testing/thread_modules_test.ts`).
 *
 * @module
 */
export * from "./kinds/mod.ts";
export * from "./secrets.ts";

/** Longest `seen` in a failed check. */
export const MAX_SEEN_LENGTH = 200;
