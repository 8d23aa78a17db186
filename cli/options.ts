import { InvalidArgumentError } from "commander";

/** Commander parser for a whole number option. */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError("Not a whole number.");
  return Number(value);
}

/** Commander parser for a JSON option value. */
export function jsonValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new InvalidArgumentError("Not valid JSON.");
  }
}

/** Commander parser for repeated `--header "Name: value"` options, collected into an object. */
export function header(
  value: string,
  previous: Record<string, string> = {},
): Record<string, string> {
  const colon = value.indexOf(":");
  if (colon <= 0) throw new InvalidArgumentError('Expected "Name: value".');
  return { ...previous, [value.slice(0, colon).trim()]: value.slice(colon + 1).trim() };
}

/** Commander parser for a comma-separated list. */
export function list(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
}
