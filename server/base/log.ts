export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

type Fields = Record<string, unknown>;

/** Structured logging: one JSON object per line on stdout. */
export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
}

/** The batch's size: a turn's lines past it are written in more than one write. */
const BATCH_BYTES = 65536;

/**
 * Writes lines to stdout in batches: the lines of one turn of the event loop go out in one
 * write, instead of one write each (at thousands of requests a second, that is most of what
 * logging costs). Each line is encoded into the batch's buffer as it comes, so that no line's
 * text outlives its call. The batch is written when the process exits normally; a crash may lose
 * the lines of the turn it ends.
 */
export function createStdoutWriter(
  out: { writeSync(bytes: Uint8Array): number } = Deno.stdout,
  batchBytes = BATCH_BYTES,
): { write(line: string): void; flush(): void } {
  const encoder = new TextEncoder();
  const batch = new Uint8Array(batchBytes);
  let used = 0;
  let scheduled = false;
  const writeAll = (bytes: Uint8Array) => {
    while (bytes.length > 0) bytes = bytes.subarray(out.writeSync(bytes));
  };
  const flush = () => {
    scheduled = false;
    if (used === 0) return;
    const bytes = batch.subarray(0, used);
    used = 0;
    writeAll(bytes);
  };
  globalThis.addEventListener("unload", flush);
  return {
    write(line) {
      // A UTF-16 unit takes at most three bytes of UTF-8; the newline one.
      const most = line.length * 3 + 1;
      if (most > batchBytes - used) {
        flush();
        if (most > batchBytes) return writeAll(encoder.encode(`${line}\n`));
      }
      used += encoder.encodeInto(line, batch.subarray(used)).written;
      batch[used++] = 10;
      if (!scheduled) {
        scheduled = true;
        setTimeout(flush, 0);
      }
    },
    flush,
  };
}

let stdoutWriter: ReturnType<typeof createStdoutWriter> | undefined;

/** The process's one batched stdout writer. */
export function stdoutLines(): ReturnType<typeof createStdoutWriter> {
  return stdoutWriter ??= createStdoutWriter();
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => stdoutLines().write(line),
): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  // The time's text, made once a millisecond: at thousands of lines a second, making it for
  // each line cost more than the rest of the line.
  let timeMs = Number.NaN;
  let time = "";
  const at = (lvl: Exclude<LogLevel, "silent">) => (msg: string, fields?: Fields) => {
    if (LOG_LEVELS.indexOf(lvl) < threshold) return;
    const now = Date.now();
    if (now !== timeMs) {
      timeMs = now;
      time = new Date(now).toISOString();
    }
    write(JSON.stringify({ time, level: lvl, msg, ...fields }));
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** The fields that describe an unexpected error in the log: its message and stack, nothing else. */
export function errorFields(error: unknown): Fields {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? error.cause : undefined;
    return { error: error.message, stack: (cause ?? error).stack };
  }
  return { error: String(error) };
}
