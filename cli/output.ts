/** Output for people (aligned tables, short sentences) and for scripts (`--json`). */

export interface Output {
  /** Prints `json` with `--json`, else the human text (built only when needed). */
  result(human: () => string, json: unknown): void;
  /** Writes a line to stderr. */
  error(line: string): void;
  json: boolean;
}

export function createOutput(
  { json, stdout, stderr }: {
    json: boolean;
    stdout: (text: string) => void;
    stderr: (text: string) => void;
  },
): Output {
  return {
    json,
    result: (human, value) => stdout(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`),
    error: (line) => stderr(`${line}\n`),
  };
}

const show = (value: unknown): string => {
  if (value === null || value === undefined) return "-";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
};

/** Rows under headers, each column as wide as its widest cell. */
export function table(headers: string[], rows: unknown[][]): string {
  const cells = [headers, ...rows.map((row) => row.map(show))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells
    .map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd())
    .join("\n");
}

/** One record as `field  value` lines. */
export function record(fields: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(fields).map((k) => k.length));
  return Object.entries(fields).map(([k, v]) => `${k.padEnd(width)}  ${show(v)}`).join("\n");
}
