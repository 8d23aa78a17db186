/**
 * The host and port of a URL whose scheme WHATWG does not know (`tcp:`, `tls:`, `dns:`): such a
 * URL's host is kept as written, so it is read again as an http URL's would be (lower case,
 * IDNA, IPv4 forms), which is what a connection to it resolves.
 *
 * @module
 */

/** `host[:port]` as stored, with the port; or what is wrong with it. */
export function hostAndPort(
  url: URL,
  { defaultPort }: { defaultPort?: number } = {},
): { host: string; port: number } | { problem: string } {
  if (url.username !== "" || url.password !== "") {
    return { problem: "must not hold a user name or password" };
  }
  if (url.host === "") return { problem: "must name a host" };
  const asHttp = URL.canParse(`http://${url.hostname}/`)
    ? new URL(`http://${url.hostname}/`)
    : null;
  if (!asHttp) return { problem: "must name a valid host" };
  const port = url.port === "" ? defaultPort : Number(url.port);
  if (port === undefined) return { problem: "must name a port (host:port)" };
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return { problem: "must name a port from 1 to 65535" };
  }
  return { host: asHttp.hostname, port };
}
