/**
 * The OpenAPI 3.1 document of `/api/v1`, generated from the router's procedures by
 * trpc-to-openapi, then completed from two sources: each procedure's meta (its success answers
 * and the failures it declares, from `operationsOf` in `server/procedures/operations_build.ts`) and the
 * error contract in `server/procedures/errors.ts` (the failures every operation of its shape can answer,
 * with the server's own messages). The document is an output: the REST routes
 * (`server/edge/rest/routes.ts`) are built from the same meta, not from it.
 *
 * @module
 */
import { alertEvent, errorBody } from "@probe/shared";
import { z } from "zod";
import type { AnyRouter } from "@trpc/server";
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import {
  codeOfStatus,
  defaultMessages,
  type ErrorCode,
  type ErrorExample,
  ERRORS,
  errorsOf,
  openApiErrorResponse,
} from "../procedures/errors.ts";
import type { Meta, ServiceMeta } from "../procedures/init.ts";
import { operationsOf } from "../procedures/operations_build.ts";

export const API_KEY_SCHEME = "ApiKey";

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
  {
    name: "incidents",
    description: "Opened when a probe goes down, resolved when it recovers; acknowledging one " +
      "stops its reminders.",
  },
  {
    name: "alerts",
    description: "The alert policy: who is told, after how many failing runs, and how often " +
      "reminders go out; per-project overrides.",
  },
  {
    name: "maintenance",
    description: "Maintenance windows: runs go on, recorded apart, with no alerts.",
  },
  {
    name: "notification-targets",
    description: "Where alerts go: webhook, Slack, Discord and mail targets, and the built-in " +
      "log. Secrets are write-only.",
  },
  {
    name: "overview",
    description: "The dashboard's read: every project with each probe's state, uptime, latency " +
      "and sparkline, and the open incidents, in one call.",
  },
  {
    name: "status-pages",
    description: "A project's public status page at `/status/{project}` (and its JSON twin): " +
      "private until made public; URLs hidden unless shown.",
  },
  {
    name: "badges",
    description: "Tokens for a probe's or a project's badges (`/badge/{token}/…`): listed " +
      "with the token (it reveals only its badge), rotated to stop an old one.",
  },
  {
    name: "heartbeats",
    description: "URLs that jobs ping (`/ping/{token}`): a heartbeat is down when no success " +
      "comes by its deadline (a period or a cron schedule, plus a grace), or when a run fails.",
  },
  {
    name: "locations",
    description: "Where probes run from: the built-in location (the runners on the database) " +
      "and remote ones, whose runners reach the service with a location token.",
  },
  {
    name: "runner",
    description: "The runner protocol: a remote location's runners claim its due runs and post " +
      "their results, with the location's token (and nothing else may call these).",
  },
  {
    name: "whoami",
    description: "Who the caller is (name, role, projects) and what it may do: write, or only " +
      "read.",
  },
  {
    name: "api-keys",
    description: "Keys made through the API, each with a role (viewer, editor, admin) and " +
      "optionally limited to some projects; the keys from the environment listed beside them.",
  },
  {
    name: "audit-log",
    description: "Who changed what, when and from where: every change made through the API, " +
      "newest first, secrets masked (docs/access.md). Admin only; read only.",
  },
  {
    name: "sessions",
    description: "Dashboard sessions (docs/access.md): an admin lists and ends anyone's, every " +
      "other caller its own.",
  },
];

/** A header of every webhook call, per the Standard Webhooks specification. */
const signatureHeader = (name: string, description: string, example: string) => ({
  name,
  in: "header" as const,
  required: true,
  description,
  schema: { type: "string" as const },
  example,
});

/**
 * The calls the service makes (OpenAPI 3.1 `webhooks`): the alert event a webhook notification
 * target receives, its schema built from the zod schema the senders use, signed per the
 * Standard Webhooks specification.
 */
function webhooks(): NonNullable<OpenAPIObject["webhooks"]> {
  // As plain JSON, the way the document is served; `$schema` is the document's to say.
  const { $schema: _, ...schema } = JSON.parse(
    JSON.stringify(z.toJSONSchema(alertEvent, { io: "output" })),
  );
  return {
    alertEvent: {
      post: {
        operationId: "webhooks-alertEvent",
        tags: ["notification-targets"],
        summary: "An alert event, sent to a webhook notification target",
        description: "A probe went down, recovered, became degraded or is still down " +
          "(a reminder), or the target was tested. Slack, Discord, mail and log targets get " +
          "the same event in their own format. Signed per the Standard Webhooks specification " +
          "with the target's `whsec_` key: verify the signature and the timestamp (any " +
          "Standard Webhooks library does both), and drop repeats by `webhook-id`.",
        parameters: [
          signatureHeader(
            "webhook-id",
            "The notification's id: the same on every attempt to deliver it.",
            "msg_2f1c8e0a9b7d4c3e",
          ),
          signatureHeader(
            "webhook-timestamp",
            "Unix seconds of this attempt; part of the signed content.",
            "1795000000",
          ),
          signatureHeader(
            "webhook-signature",
            "`v1,` and the base64 HMAC-SHA256, keyed with the base64-decoded part of the " +
              "target's `whsec_` key, of `<webhook-id>.<webhook-timestamp>.<body>`.",
            "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
          ),
        ],
        requestBody: {
          required: true,
          content: { "application/json": { schema } },
        },
        responses: {
          "2XX": { description: "Delivered." },
          "4XX": { description: "Refused: the delivery failed." },
          "5XX": { description: "The delivery failed." },
        },
      },
    },
  };
}

const DESCRIPTION =
  `An HTTP monitoring service. Projects group probes: HTTP checks of a URL that run on a schedule
(or at once with \`…/run\`), judged by their status, latency and optional assertions on the body,
JSON fields, headers and TLS certificate. Their results give uptime and latency over 1 hour to 90
days, a status board and chart series. A probe that keeps failing opens an incident and alerts the
notification targets (webhook, Slack, Discord, mail, log) under the alert policy, except in
maintenance windows. A project can publish a status page (\`/status/{project}\`, no key) and
badges (\`/badge/{token}/…\`); the global I'm alive report says the service itself is running.
The dashboard at \`/\` uses this same API.

Every operation needs the API key in the \`X-Service-Api-Key\` header. Successful answers carry
their payload under \`data\`, and lists a \`meta\` with the \`count\`. Every failure answers
\`{ "error": { "code", "message", "details"? } }\`, where \`details\` lists the fields at fault as
\`{ path, message }\`. A read-only key (\`SERVICE_API_KEYS_READONLY\`) may call every GET operation;
every other operation answers it 403 (\`forbidden\`). \`GET /whoami\` tells a key's scope. Any
operation can answer 429 (rate limited, with \`Retry-After\`) and 503
(the database is not available).`;

type Responses = Record<string, unknown>;
interface Operation {
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Responses;
  [field: string]: unknown;
}

const BODY_METHODS = new Set(["post", "put", "patch"]);

/** The body of an action that takes no input: none, or an empty object. */
const NO_INPUT_BODY = {
  required: false,
  description: "None, or `{}`: the action takes no input.",
  content: {
    "application/json": { schema: { type: "object", additionalProperties: false } },
  },
};

const operationKey = (method: string, path: string) =>
  `${method.toUpperCase()} /${path.replace(/^\/|\/$/g, "")}`;

function completeResponses(method: string, operation: Operation, meta: Meta | undefined) {
  const generated = operation.responses["200"] as { content?: unknown } | undefined;
  const success: Record<number, string> = meta?.success ?? { 200: "Success" };
  const responses: Record<number, unknown> = {};
  for (const [status, description] of Object.entries(success)) {
    responses[Number(status)] = Number(status) === 204
      ? { description }
      : { description, content: generated?.content };
  }
  const readsBody = BODY_METHODS.has(method);
  const takesInput = readsBody || (operation.parameters?.length ?? 0) > 0;
  const byStatus = new Map<number, ErrorExample[]>();
  const add = (code: ErrorCode, message: string) => {
    const status = ERRORS[code].status;
    const examples = byStatus.get(status) ?? [];
    if (!examples.some((e) => e.code === code && e.message === message)) {
      examples.push({ code, message });
    }
    byStatus.set(status, examples);
  };
  for (const code of errorsOf({ takesInput, readsBody, writes: method !== "get" })) {
    for (const message of defaultMessages(code)) add(code, message);
  }
  const declared = meta?.openapi?.errorResponses;
  if (declared && !Array.isArray(declared)) {
    for (const [status, message] of Object.entries(declared)) {
      add(codeOfStatus(Number(status)), message);
    }
  }
  for (const [status, examples] of byStatus) responses[status] = openApiErrorResponse(examples);
  const statuses = Object.keys(responses).map(Number).sort((a, b) => a - b);
  return Object.fromEntries(statuses.map((status) => [String(status), responses[status]]));
}

/** Builds the document for the router's REST operations, served under `baseUrl`. */
export function buildOpenApiDocument(router: AnyRouter, baseUrl: string): OpenAPIObject {
  // Each operation's meta, from the procedures themselves (the routes are built from it too).
  const metas = new Map<string, Meta>(
    operationsOf(router).map((operation) => [
      operationKey(operation.method, operation.template),
      operation.meta,
    ]),
  );
  const doc = generateOpenApiDocument<ServiceMeta>(router, {
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
        description: "An API key of the service: SERVICE_API_KEY (read and write) or " +
          "SERVICE_API_KEYS_READONLY (GET operations only).",
      },
    },
    defs: { Error: errorBody },
  });
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      operation.responses = completeResponses(
        method,
        operation,
        metas.get(operationKey(method, path)),
      );
      operation.security = [{ [API_KEY_SCHEME]: [] }];
      // An action whose only input is its path (acknowledge, run, test) accepts no body or `{}`.
      if (method === "post" && !operation.requestBody) operation.requestBody = NO_INPUT_BODY;
    }
  }
  // The generator's own error schemas are replaced by ours above.
  const schemas = doc.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith("error.")) delete schemas[name];
  return {
    ...doc,
    openapi: "3.1.0",
    servers: [{ url: baseUrl, description: "This service" }],
    security: [{ [API_KEY_SCHEME]: [] }],
    tags: TAGS,
    webhooks: webhooks(),
  };
}
