import {
  dataOf,
  dataWithMeta,
  nameInPath,
  pageMeta,
  probe,
  probeCreateInput,
  probeCreateWithProjectInput,
  probeListByProjectInput,
  probeListInput,
  probePatchInput,
  probeRef,
  probeResult,
  probeWritten,
} from "@probe/shared";
import { z } from "zod";
import {
  createProbe,
  deleteProbe,
  getProbe,
  listProbes,
  updateProbe,
} from "../../domain/probes.ts";
import { unavailable } from "../../domain/errors.ts";
import type { Context } from "../context.ts";
import { apiProcedure, audited, router } from "../init.ts";
import { listMeter, pageAnswer } from "../pages.ts";
import { seesSecrets, shown } from "../shown.ts";
import { visibleProjects } from "../scope.ts";

const tags = ["probes"];
const createErrors = { 404: "Project not found" };
const createAnswers = {
  201: "Probe created",
  200: "A probe for that URL existed and was written again",
};
const createOutput = dataWithMeta(probeWritten, z.object({ created: z.boolean() }));
const listOutput = dataWithMeta(z.array(probe), pageMeta);

async function create(ctx: Context, input: z.infer<typeof probeCreateInput>) {
  const { probe, created } = await createProbe({
    db: ctx.db,
    input,
    defaults: ctx.probeDefaults,
  });
  ctx.res.status = created ? 201 : 200;
  return { data: probe, meta: { created } };
}

async function list(ctx: Context, { project, ...page }: z.infer<typeof probeListInput>) {
  const show = shown(ctx);
  const meter = listMeter(ctx);
  const { rows, next } = await listProbes({
    db: ctx.db,
    project,
    visible: visibleProjects(ctx.principal),
    page,
    defaults: ctx.probeDefaults,
    // Probes can be big: a list too large for its answer stops reading (413), before any probe
    // is read when their text as stored is already too much (a read-only key sees URLs and
    // headers masked, shorter than stored: for it only the probes read count).
    onWeight: seesSecrets(ctx) ? meter?.expect : undefined,
    onRows: meter && ((rows) => meter.count(rows.map((p) => show.probe(p)))),
    cutAfterChars: ctx.listPageChars,
  });
  return pageAnswer({ rows: rows.map((p) => show.probe(p)), next });
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
        errorResponses: createErrors,
      },
      success: createAnswers,
    })
    .input(probeCreateInput)
    .use(audited)
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
        errorResponses: createErrors,
      },
      success: createAnswers,
    })
    .input(probeCreateWithProjectInput)
    .use(audited)
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
      },
      paged: true,
    })
    .input(probeListInput)
    .output(listOutput)
    .query(({ ctx, input }) => list(ctx, input)),

  listByProject: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/probes",
        tags,
        summary: "List the probes of one project",
        protect: true,
      },
      paged: true,
    })
    .input(probeListByProjectInput)
    .output(listOutput)
    .query(({ ctx, input }) => list(ctx, input)),

  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}/probes/{probeId}",
        tags,
        summary: "Get a probe",
        protect: true,
        errorResponses: { 404: "Probe not found" },
      },
    })
    .input(probeRef)
    .output(dataOf(probe))
    .query(async ({ ctx, input }) => ({
      data: shown(ctx).probe(
        await getProbe({ db: ctx.db, ref: input, defaults: ctx.probeDefaults }),
      ),
    })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/projects/{project}/probes/{probeId}",
        tags,
        summary: "Rewrite a probe",
        description: "The probe_id changes when the URL or method changes.",
        protect: true,
        errorResponses: { 404: "Probe not found", 422: "No fields were provided" },
      },
    })
    .input(probePatchInput)
    .use(audited)
    .output(dataOf(probeWritten))
    .mutation(async ({ ctx, input }) => ({
      data: await updateProbe({ db: ctx.db, input, defaults: ctx.probeDefaults }),
    })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/projects/{project}/probes/{probeId}",
        tags,
        summary: "Delete a probe",
        protect: true,
        errorResponses: { 404: "Probe not found" },
      },
      success: { 204: "Probe deleted; no body" },
    })
    .input(probeRef)
    .use(audited)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteProbe({ db: ctx.db, ref: input });
    }),

  run: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/projects/{project}/probes/{probeId}/run",
        tags,
        summary: "Run a probe once, now",
        description: "Runs the probe at once with the runner's settings and assertions, records " +
          "the result (`trigger: manual`; it counts toward the state and uptime like any run) and " +
          "answers with it. Takes no input: send no body or `{}`. One manual run per probe at a " +
          "time (409).",
        protect: true,
        errorResponses: {
          404: "Probe not found",
          409: "A manual run of this probe is already in flight",
          503: "Running probes is not available",
        },
      },
    })
    .input(z.strictObject({ project: nameInPath, probeId: z.string() }))
    .use(audited)
    .output(dataOf(probeResult))
    .mutation(async ({ ctx, input }) => {
      if (!ctx.runNow) throw unavailable("Running probes");
      // Each request past the first (redirect hops, a retry) is charged to the caller's key.
      return { data: await ctx.runNow.run(input, { chargeRequests: ctx.chargeKey }) };
    }),
});
