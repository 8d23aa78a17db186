/**
 * Hands the C heap's free pages back to the system once a minute, through glibc's `malloc_trim`.
 *
 * glibc keeps a freed block resident when live blocks sit on either side of it, and it keeps the
 * arenas of the process's threads (the database's, the probes') at their largest. Only
 * `malloc_trim` returns free pages from the middle of every arena. Measured on the embedded
 * database (`deno task bench:memory`), it takes some 10 MiB off the server's resident memory a
 * minute after start. It costs well under a millisecond at this size, and runs once a minute.
 *
 * It needs `--allow-ffi` for the system's library folders, as `deno task start` and `deno task
 * runner` give it. Where that is not granted, or the C library is not glibc (musl, macOS), it does
 * nothing.
 *
 * @module
 */
import type { Clock } from "./clock.ts";
import { createLoop, type Loop } from "./loop.ts";
import type { Logger } from "./log.ts";

/** How often the heap is trimmed. */
export const HEAP_TRIM_EVERY_MS = 60_000;

/** Where glibc lives on the distributions the service is run on (Debian, Ubuntu, Fedora, Alpine's gcompat). */
const LIBC_PATHS = [
  "/lib/x86_64-linux-gnu/libc.so.6",
  "/usr/lib/x86_64-linux-gnu/libc.so.6",
  "/lib/aarch64-linux-gnu/libc.so.6",
  "/usr/lib/aarch64-linux-gnu/libc.so.6",
  "/lib64/libc.so.6",
  "/usr/lib64/libc.so.6",
];

const SYMBOLS = { malloc_trim: { parameters: ["usize"], result: "i32" } } as const;

/** `malloc_trim(0)`, or null where it cannot be reached (no permission, no glibc). */
export function openHeapTrim(): (() => void) | null {
  if (Deno.build.os !== "linux") return null;
  for (const path of LIBC_PATHS) {
    if (Deno.permissions.querySync({ name: "ffi", path }).state !== "granted") continue;
    try {
      const lib = Deno.dlopen(path, SYMBOLS);
      return () => void lib.symbols.malloc_trim(0n);
    } catch {
      // Not there, or not glibc: the next path.
    }
  }
  return null;
}

/** A loop trimming the heap every {@link HEAP_TRIM_EVERY_MS}, first a few seconds after start; null where it cannot. */
export function createHeapTrimLoop({ clock, log }: { clock: Clock; log: Logger }): Loop | null {
  const trim = openHeapTrim();
  if (!trim) return null;
  return createLoop({
    name: "heap trim",
    clock,
    log,
    everyMs: HEAP_TRIM_EVERY_MS,
    // After start-up's own garbage (migrations, the database's first open) is freed.
    firstMs: 5_000,
    task: () => Promise.resolve(trim()),
  });
}
