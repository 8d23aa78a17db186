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
  close(): Promise<void>;
}

/**
 * Starts the provider. `redirectUri` is the service's callback; `groups` maps a login name to
 * its `groups` claim (none for a name not listed).
 */
export async function startOidcProvider(
  { redirectUri, groups }: { redirectUri: string; groups: Record<string, string[]> },
): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = "probe-dashboard";
  const clientSecret = "test-client-secret-0123456789abcdef";
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    }],
    claims: { openid: ["sub"], email: ["email", "email_verified"], groups: ["groups"] },
    // The claims of the scopes asked for go in the ID token, which is what the service reads.
    conformIdTokenClaims: false,
    cookies: { keys: ["test-provider-cookie-key-0123456789"] },
    pkce: { required: () => true },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({
        sub: id,
        email: `${id}@example.com`,
        email_verified: true,
        ...(groups[id] && { groups: groups[id] }),
      }),
    }),
  });
  server.on("request", provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
