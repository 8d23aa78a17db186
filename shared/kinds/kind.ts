/**
 * What a kind of probe is, as the interface sees it: the URL form it takes, which probe fields
 * it uses and which `expect` checks it can make. A probe's kind follows from its URL's scheme.
 * The runner's half of a kind (how a run is made and judged) is `server/runner/kinds/`.
 *
 * @module
 */
import type { ProbeExpect } from "../expect.ts";

/** The probe fields a kind may not use: each is refused (422) on a kind that has no use for it. */
export type KindField = "method" | "headers" | "body";

export interface KindRules {
  /** The kind's name: `http`, `tcp`, `tls`, `dns` (docs/kinds.md). */
  readonly name: string;
  /** The URL schemes of this kind, with their colon (`"tcp:"`). */
  readonly schemes: readonly string[];
  /** The URL form, for messages and documents: `tcp://host:port`. */
  readonly form: string;
  /**
   * The URL as stored (normalised, without its fragment), or a problem in words. Called only
   * with a URL whose scheme is one of `schemes`.
   */
  normalize(url: URL): string | { problem: string };
  /**
   * Whether its URLs may hold a credential (a password, a token in the query) that read-only keys
   * and alerts must not see (`maskUrl`); a kind whose URL form has no room for one shows it whole.
   */
  readonly urlHoldsSecrets: boolean;
  /** Which of `method`, `headers` and `body` the kind uses; the others are refused. */
  readonly uses: Readonly<Record<KindField, boolean>>;
  /** The `expect` checks the kind can make; any other is refused. */
  readonly expects: readonly (keyof ProbeExpect)[];
  /** Rules of its own on a definition of this kind (a `body` that must be text, say). */
  problems?(definition: KindDefinition): KindProblem[];
}

/** A definition as the kind checks see it: absent, null, `{}` and the default method are unused. */
export interface KindDefinition {
  url: string;
  method?: string | null;
  headers?: Record<string, string> | null;
  body?: unknown;
  expect?: ProbeExpect | null;
}

/** One problem with a definition for its kind: where, and in words. */
export interface KindProblem {
  path: string[];
  message: string;
}
