/**
 * A real OpenID provider on loopback for the tests (`oidc-provider`, with its development login
 * and consent pages): one confidential client, and accounts whose login name is their subject,
 * `<login>@example.com` their email, and whose groups the test gives.
 *
 * @module
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /**
   * Opens the provider to the service whose callback is `redirectUri` (for a service started
   * after the provider, once its port is known); until then it answers 503.
   */
  register(redirectUri: string): void;
  close(): Promise<void>;
}

/**
 * Starts the provider. `redirectUri` is the service's callback (or give it later to
 * `register`); `groups` maps a login name to its `groups` claim (none for a name not listed).
 */
export async function startOidcProvider(
  { redirectUri, groups }: { redirectUri?: string; groups: Record<string, string[]> },
): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = "probe-dashboard";
  const clientSecret = "test-client-secret-0123456789abcdef";
  let handle: ReturnType<Provider["callback"]> | null = null;
  server.on("request", (req, res) => {
    if (handle) return handle(req, res);
    res.writeHead(503).end();
  });
  const register = (uri: string) => {
    const provider = new Provider(issuer, {
      clients: [{
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [uri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      }],
      claims: { openid: ["sub"], email: ["email", "email_verified"], groups: ["groups"] },
      // The claims of the scopes asked for go in the ID token, which is what the service reads.
      conformIdTokenClaims: false,
      cookies: { keys: ["test-provider-cookie-key-0123456789"] },
      pkce: { required: () => true },
      findAccount: (_ctx: unknown, id: string) => ({
        accountId: id,
        claims: () => ({
          sub: id,
          email: `${id}@example.com`,
          email_verified: true,
          ...(groups[id] && { groups: groups[id] }),
        }),
      }),
    });
    handle = provider.callback();
  };
  if (redirectUri) register(redirectUri);
  return {
    issuer,
    clientId,
    clientSecret,
    register,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Signs `login` in at the provider as a browser would, without one: follows its redirects with
 * its cookies and submits its login and consent forms, until it sends the browser to a URL
 * starting with `returnTo` (the service's callback), which it answers.
 */
export async function signInAtProvider(
  authorizationUrl: string,
  login: string,
  returnTo: string,
): Promise<string> {
  const jar = new Map<string, string>();
  const send = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const at = pair.indexOf("=");
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  let response = await send(authorizationUrl);
  for (let step = 0; step < 12; step++) {
    const location = response.headers.get("location");
    if (location !== null) {
      await response.body?.cancel();
      const next = new URL(location, response.url || authorizationUrl).href;
      if (next.startsWith(returnTo)) return next;
      response = await send(next);
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (response.status !== 200 || !action) {
      throw new Error(`the provider answered ${response.status}: ${page.slice(0, 300)}`);
    }
    const form = new URLSearchParams();
    for (const input of page.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
      const name = /name="([^"]+)"/.exec(input[0])?.[1];
      if (name) form.set(name, /value="([^"]*)"/.exec(input[0])?.[1] ?? "");
    }
    if (/name="login"/.test(page)) {
      form.set("login", login);
      form.set("password", "any");
    }
    response = await send(new URL(action, authorizationUrl).href, {
      method: "POST",
      body: form,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
  }
  throw new Error("the provider never sent the browser back");
}
