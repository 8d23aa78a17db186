/**
 * The OpenAPI 3.1 document of `/api/v1`, generated from the router's procedures by
 * trpc-to-openapi, then completed with what the procedures' metadata cannot say: the status codes
 * they answer with besides 200, the error body every failure shares, and the API key scheme.
 */
import { errorBody } from "@probe/shared";
import type { AnyRouter } from "@trpc/server";
import { generateOpenApiDocument, type OpenApiMeta, type OpenAPIObject } from "trpc-to-openapi";

export const API_KEY_SCHEME = "ApiKey";
const ERROR_REF = { $ref: "#/components/schemas/Error" };

interface Answer {
  description: string;
  /** Whether the answer carries the operation's `{ data, meta }` body. */
  body: boolean;
}

/**
 * Success answers other than a single 200 with a body, by operation. The procedures set these
 * on `ctx.res.status`; the bridge's generator knows only 200.
 */
const SUCCESS: Record<string, Record<number, Answer>> = {
  "POST /projects": { 201: { description: "Project created", body: true } },
  "POST /projects/{project}/probes": {
    201: { description: "Probe created", body: true },
    200: { description: "A probe for that URL existed and was written again", body: true },
  },
  "POST /probes": {
    201: { description: "Probe created", body: true },
    200: { description: "A probe for that URL existed and was written again", body: true },
  },
  "DELETE /projects/{project}/probes/{probeId}": {
    204: { description: "Probe deleted; no body", body: false },
  },
};

/** The error code each status carries in the body, as server/errors.ts maps them. */
const ERROR_CODES: Record<number, string> = {
  400: "malformed_json",
  401: "unauthorized",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "validation_failed",
  500: "internal",
  503: "service_unavailable",
};

/** What the HTTP layer answers for any operation that reads a JSON body (server/body.ts). */
const BODY_ERRORS: Record<number, string> = {
  400: "The body is empty or not valid JSON",
  413: "The body is larger than 1 MiB",
  415: "The body is not application/json",
};

const TAGS = [
  { name: "projects", description: "Projects group probes; deleting one archives it first." },
  {
    name: "probes",
    description: "HTTP checks of a target URL. A probe's id follows from its method and URL.",
  },
  { name: "settings", description: "The global I'm alive reporting settings." },
  {
    name: "results",
    description: "What the probe runner recorded: results, uptime and latency, a status board.",
  },
];

const DESCRIPTION =
  `Projects, the probes (HTTP checks) under them, and the global I'm alive settings.

Every operation needs the API key in the \`X-Service-Api-Key\` header. Successful answers carry
their payload under \`data\`, and lists a \`meta\` with the \`count\`. Every failure answers
\`{ "error": { "code", "message", "details"? } }\`, where \`details\` lists the fields at fault as
\`{ path, message }\`.`;

type Responses = Record<string, unknown>;
type Operation = { requestBody?: unknown; responses: Responses } & Record<string, unknown>;

/** The procedures' OpenAPI metadata, by `METHOD /path`. */
function operationMeta(router: AnyRouter): Map<string, NonNullable<OpenApiMeta["openapi"]>> {
  const byOperation = new Map<string, NonNullable<OpenApiMeta["openapi"]>>();
  for (const procedure of Object.values(router._def.procedures)) {
    // deno-lint-ignore no-explicit-any
    const openapi = ((procedure as any)._def.meta as OpenApiMeta | undefined)?.openapi;
    if (openapi?.enabled !== false && openapi) {
      byOperation.set(`${openapi.method} ${openapi.path}`, openapi);
    }
  }
  return byOperation;
}

function errorResponse(status: number, description: string) {
  return {
    description,
    content: {
      "application/json": {
        schema: ERROR_REF,
        example: { error: { code: ERROR_CODES[status] ?? "error", message: description } },
      },
    },
  };
}

function completeResponses(
  key: string,
  operation: Operation,
  meta: NonNullable<OpenApiMeta["openapi"]> | undefined,
): Responses {
  const generated = operation.responses["200"] as { content?: unknown } | undefined;
  const success = SUCCESS[key] ??
    { 200: { description: meta?.successDescription ?? "Success", body: true } };
  const responses: Record<number, unknown> = {};
  for (const [status, answer] of Object.entries(success)) {
    responses[Number(status)] = answer.body
      ? { description: answer.description, content: generated?.content }
      : { description: answer.description };
  }
  const declared: Record<number, string> = Array.isArray(meta?.errorResponses)
    ? Object.fromEntries(meta.errorResponses.map((s) => [s, ERROR_CODES[s] ?? "Error"]))
    : meta?.errorResponses ?? {};
  const errors: Record<number, string> = {
    ...(operation.requestBody ? BODY_ERRORS : {}),
    500: "Internal server error",
    ...declared,
  };
  for (const [status, description] of Object.entries(errors)) {
    responses[Number(status)] = errorResponse(Number(status), description);
  }
  const byStatus = Object.keys(responses).map(Number).sort((a, b) => a - b);
  return Object.fromEntries(byStatus.map((status) => [String(status), responses[status]]));
}

/** Builds the document for the router's REST operations, served under `baseUrl`. */
export function buildOpenApiDocument(router: AnyRouter, baseUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(router, {
    title: "Probe service API",
    version: "1.0.0",
    description: DESCRIPTION,
    baseUrl,
    license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    tags: TAGS.map((t) => t.name),
    securitySchemes: {
      [API_KEY_SCHEME]: {
        type: "apiKey",
        in: "header",
        name: "X-Service-Api-Key",
        description: "The service's API key (SERVICE_API_KEY).",
      },
    },
    defs: { Error: errorBody },
  });
  const metas = operationMeta(router);
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      const key = `${method.toUpperCase()} ${path}`;
      operation.responses = completeResponses(key, operation, metas.get(key));
      operation.security = [{ [API_KEY_SCHEME]: [] }];
    }
  }
  // The bridge's own error schemas are replaced by ours above.
  const schemas = doc.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith("error.")) delete schemas[name];
  return {
    ...doc,
    openapi: "3.1.0",
    servers: [{ url: baseUrl, description: "This service" }],
    security: [{ [API_KEY_SCHEME]: [] }],
    tags: TAGS,
  };
}

const cache = new WeakMap<AnyRouter, Map<string, string>>();

/** The document as JSON text, built once per router and base URL. */
export function openApiJson(router: AnyRouter, baseUrl: string): string {
  let byBase = cache.get(router);
  if (!byBase) cache.set(router, byBase = new Map());
  let text = byBase.get(baseUrl);
  if (text === undefined) {
    text = JSON.stringify(buildOpenApiDocument(router, baseUrl));
    byBase.set(baseUrl, text);
  }
  return text;
}
