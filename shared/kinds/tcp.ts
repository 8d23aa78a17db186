/**
 * `tcp://host:port`: up when a connection is accepted within the timeout. Optionally `body` (text)
 * is sent once connected and `expect.body` judges what comes back.
 *
 * @module
 */
import { hostAndPort } from "./host.ts";
import type { KindDefinition, KindProblem, KindRules } from "./kind.ts";

/** The URL of a host and port alone: no path beyond `/`, no query. */
export function connectionUrl(scheme: string, url: URL): string | { problem: string } {
  const where = hostAndPort(url);
  if ("problem" in where) return where;
  if (url.pathname !== "" && url.pathname !== "/") return { problem: "must have no path" };
  if (url.search !== "") return { problem: "must have no query" };
  return `${scheme}//${where.host}:${where.port}`;
}

/** A body a connection sends is text: sent as UTF-8. */
export function textBody(d: KindDefinition): KindProblem[] {
  return d.body === undefined || d.body === null || typeof d.body === "string"
    ? []
    : [{ path: ["body"], message: "must be text: the bytes sent once connected, as UTF-8" }];
}

export const tcpRules: KindRules = {
  name: "tcp",
  schemes: ["tcp:"],
  form: "tcp://host:port",
  normalize: (url) => connectionUrl("tcp:", url),
  urlHoldsSecrets: false,
  uses: { method: false, headers: false, body: true },
  expects: ["body"],
  problems: textBody,
};
