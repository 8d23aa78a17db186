/**
 * Links to what the service serves without a key (status pages, badges). The service answers
 * paths (`/status/shop`, `/badge/…/status.svg`): it does not know the name it is reached by behind a
 * proxy. The CLI puts the service URL it talks to in front of them, or `--origin` when given.
 */
import { InvalidArgumentError, Option } from "commander";

/** `--origin <url>`: the public address to print links with. */
export const originOption = () =>
  new Option(
    "--origin <url>",
    "the public address to print links with (default: the service URL, --url)",
  ).argParser(origin);

/** Commander parser for `--origin`: an http(s) URL, kept without a trailing `/`. */
export function origin(value: string): string {
  if (!/^https?:\/\//.test(value) || !URL.canParse(value)) {
    throw new InvalidArgumentError("Not an http(s) URL.");
  }
  return value.replace(/\/+$/, "");
}

/** `path` (as the service answers it) under `origin`, for example `https://x.example/status/shop`. */
export const link = (base: string, path: string): string => `${base.replace(/\/+$/, "")}${path}`;

/** Shields' endpoint badge for a JSON badge URL: Shields draws it in any of its styles. */
export const shieldsUrl = (jsonUrl: string): string =>
  `https://img.shields.io/endpoint?url=${encodeURIComponent(jsonUrl)}`;
