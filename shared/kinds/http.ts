/**
 * `http://` and `https://`: a request, its answer judged by status, body, JSON, headers and the
 * certificate (https).
 *
 * @module
 */
import type { KindRules } from "./kind.ts";

export const httpRules: KindRules = {
  name: "http",
  schemes: ["http:", "https:"],
  form: "http(s)://host[:port]/path",
  normalize(url) {
    url.hash = "";
    return url.href;
  },
  urlHoldsSecrets: true,
  uses: { method: true, headers: true, body: true },
  expects: ["status", "body", "json", "headers", "certificate_days"],
};
