import type { ProbeClient } from "@probe/client";
import type { Output } from "./output.ts";

/** What a command's action needs, built from the global options when it runs. */
export interface CliContext {
  /** The typed client for the service the options name; throws a UsageError without a key. */
  client(): ProbeClient;
  /** The service's root URL the client talks to, without a trailing `/` (for links to print). */
  serviceUrl: string;
  out: Output;
  /** Reads a file; `-` is stdin. */
  readTextFile(path: string): Promise<string>;
  /** Writes (or replaces) a file. */
  writeTextFile(path: string, text: string): Promise<void>;
  /** Writes text to stdout as it is, for output that is a file's content. */
  stdout(text: string): void;
  /** The environment: where secrets are read from (`--url-env NAME`), never the command line. */
  env: Record<string, string | undefined>;
}

/** A mistake of the caller's that is not the service's to judge: no key, an unusable file. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}
