import {
  apiKey,
  apiKeyCreateInput,
  apiKeyPatchInput,
  apiKeyRef,
  apiKeyWithKey,
  countMeta,
  dataOf,
  dataWithMeta,
  nameInPath,
} from "@probe/shared";
import { z } from "zod";
import {
  createApiKey,
  deleteApiKey,
  getApiKey,
  listApiKeys,
  rotateApiKey,
  updateApiKey,
} from "../../domain/api_keys.ts";
import { apiProcedure, audited, router } from "../init.ts";

const tags = ["api-keys"];
const NOT_FOUND = "API key not found";
const CONFIGURED = "A key from the environment cannot be changed through the API";
const ADMIN = " Admin keys only.";
const NOT_ADMIN = "This key's role (editor) may not do this: it needs admin";

export const apiKeysRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/api-keys",
        tags,
        summary: "List API keys",
        description: "The keys from the environment first (`configured: true`), then the ones " +
          "made through the API by name. Keys themselves are never shown." + ADMIN,
        protect: true,
        errorResponses: { 403: NOT_ADMIN },
      },
    })
    .input(z.object({}))
    .output(dataWithMeta(z.array(apiKey), countMeta))
    .query(async ({ ctx }) => {
      const data = await listApiKeys({ db: ctx.db, configured: ctx.configuredKeys });
      return { data, meta: { count: data.length } };
    }),

  create: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api-keys",
        tags,
        summary: "Create an API key",
        description: "Answers the key (`data.key`) this once; only its digest is stored. " +
          "`projects` limits it to those projects (each must exist); `expires_at` must be in " +
          "the future." + ADMIN,
        protect: true,
        errorResponses: { 409: "API key already exists" },
      },
      success: { 201: "API key created" },
    })
    .input(apiKeyCreateInput)
    .use(audited)
    .output(dataOf(apiKeyWithKey))
    .mutation(async ({ ctx, input }) => ({
      data: await createApiKey({
        db: ctx.db,
        input,
        createdBy: ctx.principal.name,
        configured: ctx.configuredKeys,
      }),
    })),

  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/api-keys/{name}",
        tags,
        summary: "Get an API key",
        description: "Its record, never the key." + ADMIN,
        protect: true,
        errorResponses: { 403: NOT_ADMIN, 404: NOT_FOUND },
      },
    })
    .input(apiKeyRef)
    .output(dataOf(apiKey))
    .query(async ({ ctx, input }) => ({
      data: await getApiKey({ db: ctx.db, name: input.name, configured: ctx.configuredKeys }),
    })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/api-keys/{name}",
        tags,
        summary: "Update an API key",
        description: "Changes its `role`, `projects` or `expires_at`; the key stays the same " +
          "and its calls follow within a second." + ADMIN,
        protect: true,
        errorResponses: { 404: NOT_FOUND, 409: CONFIGURED, 422: "No fields were provided" },
      },
    })
    .input(apiKeyPatchInput)
    .use(audited)
    .output(dataOf(apiKey))
    .mutation(async ({ ctx, input }) => ({
      data: await updateApiKey({ db: ctx.db, input, configured: ctx.configuredKeys }),
    })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/api-keys/{name}",
        tags,
        summary: "Delete an API key",
        description: "The key stops working within a second on every instance." + ADMIN,
        protect: true,
        errorResponses: { 404: NOT_FOUND, 409: CONFIGURED },
      },
      success: { 204: "API key deleted; no body" },
    })
    .input(apiKeyRef)
    .use(audited)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteApiKey({ db: ctx.db, name: input.name, configured: ctx.configuredKeys });
    }),

  rotate: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api-keys/{name}/rotate",
        tags,
        summary: "Replace an API key",
        description: "Answers the new key (`data.key`) this once; the old one stops working " +
          "within a second on every instance." + ADMIN,
        protect: true,
        errorResponses: { 404: NOT_FOUND, 409: CONFIGURED },
      },
    })
    // No input but the path: no body or `{}`; anything else is refused (422).
    .input(z.strictObject({ name: nameInPath }))
    .use(audited)
    .output(dataOf(apiKeyWithKey))
    .mutation(async ({ ctx, input }) => ({
      data: await rotateApiKey({ db: ctx.db, name: input.name, configured: ctx.configuredKeys }),
    })),
});
