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

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => console.log(line),
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
