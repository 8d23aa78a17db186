import {
  dataOf,
  dataWithMeta,
  pageMeta,
  project,
  projectCreateInput,
  projectDeleted,
  projectListInput,
  projectPatchInput,
  projectRef,
} from "@probe/shared";
import { z } from "zod";
import {
  createProject,
  deleteProject,
  getProject,
  listProjects,
  updateProject,
} from "../../domain/projects.ts";
import { apiProcedure, audited, router } from "../init.ts";
import { pageAnswer } from "../pages.ts";
import { visibleProjects } from "../scope.ts";

const tags = ["projects"];
const projectName = z.object({ project: z.string() });

export const projectsRouter = router({
  create: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/projects",
        tags,
        summary: "Create a project",
        protect: true,
        errorResponses: { 409: "Project already exists" },
      },
      success: { 201: "Project created" },
    })
    .input(projectCreateInput)
    .use(audited)
    .output(dataOf(projectName))
    .mutation(async ({ ctx, input }) => ({
      data: await createProject({ db: ctx.db, input, names: ctx.probeDefaults }),
    })),

  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects",
        tags,
        summary: "List projects",
        protect: true,
      },
      paged: true,
    })
    .input(projectListInput)
    .output(dataWithMeta(z.array(project), pageMeta))
    .query(async ({ ctx, input: { project, ...page } }) =>
      pageAnswer(
        await listProjects({
          db: ctx.db,
          project,
          page,
          names: ctx.probeDefaults,
          visible: visibleProjects(ctx.principal),
        }),
      )
    ),

  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/projects/{project}",
        tags,
        summary: "Get a project",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
    })
    .input(projectRef)
    .output(dataOf(project))
    .query(async ({ ctx, input }) => ({
      data: await getProject({ db: ctx.db, project: input.project, names: ctx.probeDefaults }),
    })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/projects/{project}",
        tags,
        summary: "Update a project",
        protect: true,
        errorResponses: { 404: "Project not found", 422: "No fields were provided" },
      },
    })
    .input(projectPatchInput)
    .use(audited)
    .output(dataOf(projectName))
    .mutation(async ({ ctx, input }) => ({
      data: await updateProject({ db: ctx.db, input, names: ctx.probeDefaults }),
    })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/projects/{project}",
        tags,
        summary: "Archive and delete a project",
        protect: true,
        errorResponses: { 404: "Project not found" },
      },
    })
    .input(projectRef)
    .use(audited)
    .output(dataWithMeta(projectDeleted, z.object({ message: z.string() })))
    .mutation(async ({ ctx, input }) => ({
      data: await deleteProject({
        db: ctx.db,
        project: input.project,
        names: ctx.probeDefaults,
      }),
      meta: { message: `Project ${input.project} was archived and deleted` },
    })),
});
