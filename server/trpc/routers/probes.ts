import {
  countMeta,
  dataOf,
  dataWithMeta,
  probe,
  probeCreateInput,
  probeCreateWithProjectInput,
  probeListInput,
  probePatchInput,
  probeRef,
  probeWritten,
  projectRef,
} from "@probe/shared";
import { z } from "zod";
import {
  createProbe,
  deleteProbe,
  getProbe,
  listProbes,
  updateProbe,
} from "../../domain/probes.ts";
import type { Context } from "../context.ts";
import { apiProcedure, router } from "../init.ts";

const tags = ["probes"];
const unauthorized = { 401: "Missing or invalid API key" };
const createErrors = { ...unauthorized, 404: "Project not found", 422: "Validation failed" };
const createOutput = dataWithMeta(probeWritten, z.object({ created: z.boolean() }));
const listOutput = dataWithMeta(z.array(probe), countMeta);

async function create(ctx: Context, input: z.infer<typeof probeCreateInput>) {
  const { probe, created } = await createProbe({ db: ctx.db, input });
  ctx.res.status = created ? 201 : 200;
  return { data: probe, meta: { created } };
}

async function list(ctx: Context, project: string | undefined) {
  const data = await listProbes({ db: ctx.db, project });
  return { data, meta: { count: data.length } };
}

export const probesRouter = router({
  create: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/projects/{project}/probes",
        tags,
        summary: "Create or rewrite a probe of a project",
        description:
          "201 when the probe is new; 200 when the project had a probe for that URL and it was written again.",
        protect: true,
        successDescription: "Probe created (201) or rewritten (200)",
        errorResponses: createErrors,
      },
    })
    .input(probeCreateInput)
    .output(createOutput)
    .mutation(({ ctx, input }) => create(ctx, input)),

  createWithProject: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/probes",
        tags,
        summary: "Create or rewrite a probe of the project named in the body",
        description:
          "201 when the probe is new; 200 when the project had a probe for that URL and it was written again.",
        protect: true,
        successDescription: "Probe created (201) or rewritten (200)",
        errorResponses: createErrors,
      },
    })
    .input(probeCreateWithProjectInput)
    .output(createOutput)
    .mutation(({ ctx, input }) => create(ctx, input)),

  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/probes",
        tags,
        summary: "List probes of all projects",
        protect: true,
        errorResponses: unauthorized,
      },
    })
    .input(probeListInput)
    .output(listOutput)
    .query(({ ctx, input }) => list(ctx, input.project)),

  listByProject: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/probes",
        tags,
        summary: "List the probes of one project",
        protect: true,
        errorResponses: unauthorized,
      },
    })
    .input(projectRef)
    .output(listOutput)
    .query(({ ctx, input }) => list(ctx, input.project)),

  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/probes/{probeId}",
        tags,
        summary: "Get a probe",
        protect: true,
        errorResponses: { ...unauthorized, 404: "Probe not found" },
      },
    })
    .input(probeRef)
    .output(dataOf(probe))
    .query(async ({ ctx, input }) => ({ data: await getProbe({ db: ctx.db, ref: input }) })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/projects/{project}/probes/{probeId}",
        tags,
        summary: "Rewrite a probe",
        description: "The probe_id changes when the URL or method changes.",
        protect: true,
        errorResponses: {
          ...unauthorized,
          404: "Probe not found",
          422: "Validation failed or no fields were provided",
        },
      },
    })
    .input(probePatchInput)
    .output(dataOf(probeWritten))
    .mutation(async ({ ctx, input }) => ({ data: await updateProbe({ db: ctx.db, input }) })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/projects/{project}/probes/{probeId}",
        tags,
        summary: "Delete a probe",
        protect: true,
        successDescription: "Probe deleted; no body",
        errorResponses: { ...unauthorized, 404: "Probe not found" },
      },
    })
    .input(probeRef)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteProbe({ db: ctx.db, ref: input });
      ctx.res.status = 204;
    }),
});
