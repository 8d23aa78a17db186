/**
 * `tls://host:port`: a TCP connection and a TLS handshake with the host's name (SNI); the
 * certificate must be valid now, for that name, from a trusted chain. `expect.certificate_days`
 * asks it to stay valid that much longer; `body` and `expect.body` work as for `tcp://`.
 *
 * @module
 */
import type { KindRules } from "./kind.ts";
import { connectionUrl, textBody } from "./tcp.ts";

export const tlsRules: KindRules = {
  name: "tls",
  schemes: ["tls:"],
  form: "tls://host:port",
  normalize: (url) => connectionUrl("tls:", url),
  urlHoldsSecrets: false,
  uses: { method: false, headers: false, body: true },
  expects: ["body", "certificate_days"],
  problems: textBody,
};
