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

/**
 * Writes lines to stdout in batches: the lines of one turn of the event loop go out in one
 * write, instead of one write each (at thousands of requests a second, that is most of what
 * logging costs). The batch is written when the process exits normally; a crash may lose the
 * lines of the turn it ends.
 */
export function createStdoutWriter(
  out: { writeSync(bytes: Uint8Array): number } = Deno.stdout,
): { write(line: string): void; flush(): void } {
  const encoder = new TextEncoder();
  let pending = "";
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === "") return;
    let bytes = encoder.encode(pending);
    pending = "";
    while (bytes.length > 0) bytes = bytes.subarray(out.writeSync(bytes));
  };
  globalThis.addEventListener("unload", flush);
  return {
    write(line) {
      pending += line + "\n";
      if (pending.length > 65536) flush();
      else if (!scheduled) {
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
  const at = (lvl: Exclude<LogLevel, "silent">) => (msg: string, fields?: Fields) => {
    if (LOG_LEVELS.indexOf(lvl) < threshold) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
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
