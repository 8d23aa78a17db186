/**
 * The service's HTTP edge in one place: every route, and the middleware in the order it runs, on
 * one Hono router. What each route does is its own module's (named beside it); what every request
 * goes through is `middleware.ts`; every refusal and failure is answered by the one error
 * responder below (`onError`, `notFound`) or a surface's own refusal, all built by `answers.ts`
 * from the contract in `server/procedures/errors.ts`. Below the router, the connection layer
 * (`serve.ts`) refuses what never became a request (the connection cap, timeouts, 431).
 *
 * Paths are routed as they were sent (`getPath`: no percent-decoding, case and trailing slash
 * significant), so `/%61pi/v1/…` is not `/api/v1/…`; below `/api/v1/`, as trpc-to-openapi has
 * always matched REST paths: without case, one trailing slash ignored. A HEAD request is routed
 * as its GET.
 *
 * @module
 */
import { Hono } from "hono";
import { type ApiError, apiError } from "../procedures/errors.ts";
import { DOCS_PATH } from "./docs.ts";
import { STATUS_PREFIX } from "./status_page.ts";
import { BADGE_PREFIX } from "./badges.ts";
import { DASHBOARD_PATH, UI_PREFIX } from "./dashboard.ts";
import { PING_PREFIX } from "@probe/shared";
import { AUTH_PREFIX } from "./auth.ts";
import {
  admittedOf,
  type Client,
  type EdgeContext,
  type EdgeEnv,
  keepHeadLength,
  keyCheck,
  keyMiddleware,
  observe,
  type Observers,
  type Refuse,
} from "./middleware.ts";
import type { Cors } from "./cors.ts";
import type { KeyedEndpoint } from "./edge_types.ts";

export const REST_PREFIX = "/api/v1";
export const TRPC_PREFIX = "/trpc";

/** A handler of a route; null passes the request on to the next route that matches. */
type Handle = (c: EdgeContext) => Promise<Response | null> | Response | null;

export interface EdgeParts {
  /** For `observe` and `keyCheck` (`middleware.ts`). */
  observe: Observers;
  keys: Parameters<typeof keyCheck>[0];
  cors?: Cors | null;
  healthz: Handle;
  readyz: Handle;
  /** The OpenAPI document, the API reference page and its files (`docs.ts`). */
  docs: Handle;
  /** The public status pages, the badges and the dashboard, asked in that order. */
  pages: Handle;
  /** Heartbeats' ping URLs (`pings.ts`): GET, HEAD and POST, no key. */
  pings: Handle;
  /** Dashboard sign-in and sign-out, outside the API since they set cookies (`auth.ts`). */
  auth: Handle;
  /** The REST operations (`server/edge/rest/`), each a route, and how `/api/v1/*` refuses. */
  rest: RestRoute[];
  refuseRest: Refuse;
  /** `/trpc/*` (`trpc_endpoint.ts`), how it refuses, and how many calls a request makes. */
  trpc: Handle;
  refuseTrpc: Refuse;
  /** The route label of a `/trpc` request, given before its key is checked. */
  trpcLabel: (c: EdgeContext) => string;
  trpcCalls: (c: EdgeContext) => number | ApiError;
  /** Endpoints of their own path that need a key, and how they refuse. */
  keyed: KeyedEndpoint[];
  refuseKeyed: Refuse;
  /**
   * The one error responder: a failure nothing else answered (500), with the request's id when
   * the request had one, and no such route (404).
   */
  onError: (error: unknown, requestId?: string) => Response;
  notFound: () => Response;
}

/** A REST operation's route. */
export interface RestRoute {
  method: string;
  /** Below the prefix, lower case, `:name` for a parameter: `/projects/:project`. */
  path: string;
  /** Its metrics label, the template: `/api/v1/projects/{project}`. */
  label: string;
  handle: (c: EdgeContext) => Promise<Response>;
}

const REST_BELOW = `${REST_PREFIX}/`;

/** The path a request is routed by: as sent, without percent-decoding (see the module's note). */
function routingPath(request: Request): string {
  const url = request.url;
  const start = url.indexOf("/", url.indexOf("://") + 3);
  const query = url.indexOf("?", start);
  const path = query === -1 ? url.slice(start) : url.slice(start, query);
  if (!path.startsWith(REST_BELOW)) return path;
  const below = path.endsWith("/")
    ? path.slice(REST_PREFIX.length, -1)
    : path.slice(REST_PREFIX.length);
  return REST_PREFIX + below.toLowerCase();
}

/**
 * Every route of the service, and the middleware, in order. A request is routed to one handler
 * where it can be (a REST operation's: its label, key check and operation in one), so that it
 * costs no chain of middleware; a HEAD goes through a router of its own that adds
 * `keepHeadLength` in front of the same routes.
 */
export function createEdge(
  parts: EdgeParts,
): (request: Request, client?: Client) => Promise<Response> {
  const app = new Hono<EdgeEnv>({ getPath: routingPath });
  const route = (handle: Handle) => async (c: EdgeContext, next: () => Promise<void>) => {
    const answer = await handle(c);
    if (answer) return answer;
    await next();
  };
  const key = (refuse: Refuse, calls?: (c: EdgeContext) => number | ApiError) =>
    keyCheck(parts.keys, refuse, calls);
  /** Names the request's route for the metrics before anything can refuse it. */
  const label =
    (of: (c: EdgeContext) => string) => async (c: EdgeContext, next: () => Promise<void>) => {
      c.env.seen.route = of(c);
      await next();
    };

  // Without a key.
  app.get("/healthz", route(parts.healthz));
  app.get("/readyz", route(parts.readyz));
  app.get(DOCS_PATH, route(parts.docs));
  app.get(`${DOCS_PATH}/*`, route(parts.docs));
  app.get(`${REST_PREFIX}/openapi.json`, route(parts.docs));
  app.get(`${STATUS_PREFIX}*`, route(parts.pages)); // public status pages (`status_page.ts`)
  app.get(`${BADGE_PREFIX}*`, route(parts.pages)); // badges (`badges.ts`)
  app.get(DASHBOARD_PATH, route(parts.pages)); // the dashboard (`dashboard.ts`)
  app.get(`${UI_PREFIX}*`, route(parts.pages)); // its scripts, styles and vendored files
  app.on(["GET", "POST"], `${PING_PREFIX}*`, route(parts.pings)); // heartbeats' pings
  app.on(["GET", "POST"], `${AUTH_PREFIX}/*`, route(parts.auth)); // sign-in, sessions, OIDC

  // With a key: the key check and the rate limit, then the surface. A REST path no operation
  // takes is checked too, then 404 (in `notFound`).
  const restKey = key(parts.refuseRest);
  for (const rest of parts.rest) {
    app.on(rest.method, REST_PREFIX + rest.path, async (c) => {
      c.env.seen.route = rest.label;
      return await restKey(c) ?? await rest.handle(c);
    });
  }
  app.use(`${TRPC_PREFIX}/*`, label(parts.trpcLabel));
  app.use(`${TRPC_PREFIX}/*`, keyMiddleware(key(parts.refuseTrpc, parts.trpcCalls)));
  app.all(`${TRPC_PREFIX}/*`, route(parts.trpc));
  const keyedKey = keyMiddleware(key(parts.refuseKeyed));
  for (const endpoint of parts.keyed) { // /metrics (`metrics/endpoint.ts`), /backup (`backup/`)
    app.use(endpoint.path, label(() => endpoint.path));
    app.use(endpoint.path, keyedKey);
    app.all(endpoint.path, (c) => {
      const { scope, principal } = admittedOf(c);
      // A location token may use the runner protocol only.
      return scope === "location"
        ? parts.refuseKeyed(c, apiError("out_of_scope"))
        : endpoint.handle(c.req.raw, c.env.url, scope, principal);
    });
  }

  // The one error responder; a REST path no operation takes needs a key all the same.
  const notFound = async (c: EdgeContext) => {
    if (c.req.path.startsWith(REST_BELOW)) { // the path as routed (`routingPath`)
      const refused = await restKey(c);
      if (refused) return refused;
    }
    return parts.notFound();
  };
  const onError = (error: unknown, c: EdgeContext) => parts.onError(error, c.env.requestId);
  app.notFound(notFound);
  app.onError(onError);

  const head = new Hono<EdgeEnv>({ getPath: routingPath });
  head.use(keepHeadLength);
  head.route("/", app);
  head.notFound(notFound);
  head.onError(onError);

  return observe({ observers: parts.observe, cors: parts.cors }, async (request, exchange) => {
    try {
      return await (request.method === "HEAD" ? head : app).fetch(request, exchange);
    } catch (error) {
      // Hono hands on what is thrown that is not an Error.
      return parts.onError(error);
    }
  });
}
