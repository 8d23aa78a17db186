import {
  countMeta,
  dataOf,
  dataWithMeta,
  location,
  locationCreateInput,
  locationPatchInput,
  locationRef,
  locationWithToken,
  nameInPath,
} from "@probe/shared";
import { z } from "zod";
import {
  createLocation,
  deleteLocation,
  getLocation,
  listLocations,
  rotateLocationToken,
  updateLocation,
} from "../../domain/locations.ts";
import { apiProcedure, audited, router } from "../init.ts";
import { visibleProjects } from "../scope.ts";

const tags = ["locations"];
const NOT_FOUND = "Location not found";
const BUILT_IN = "The built-in location cannot be changed or deleted";

export const locationsRouter = router({
  list: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/locations",
        tags,
        summary: "List locations",
        description: "The built-in location (`RUNNER_LOCATION`, `local`) first, then the " +
          "remote ones by name. Tokens are never shown.",
        protect: true,
      },
    })
    .input(z.object({}))
    .output(dataWithMeta(z.array(location), countMeta))
    .query(async ({ ctx }) => {
      const data = await listLocations({
        db: ctx.db,
        names: ctx.probeDefaults,
        visible: visibleProjects(ctx.principal),
      });
      return { data, meta: { count: data.length } };
    }),

  create: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/locations",
        tags,
        summary: "Create a remote location",
        description: "Answers the location's token (`data.token`) this once: its runners " +
          "present it (LOCATION_TOKEN). Only its digest is stored.",
        protect: true,
        errorResponses: { 409: "Location already exists" },
      },
      success: { 201: "Location created" },
    })
    .input(locationCreateInput)
    .use(audited)
    .output(dataOf(locationWithToken))
    .mutation(async ({ ctx, input }) => ({
      data: await createLocation({ db: ctx.db, input, names: ctx.probeDefaults }),
    })),

  get: apiProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/locations/{location}",
        tags,
        summary: "Get a location",
        protect: true,
        errorResponses: { 404: NOT_FOUND },
      },
    })
    .input(locationRef)
    .output(dataOf(location))
    .query(async ({ ctx, input }) => ({
      data: await getLocation({
        db: ctx.db,
        location: input.location,
        names: ctx.probeDefaults,
        visible: visibleProjects(ctx.principal),
      }),
    })),

  update: apiProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/locations/{location}",
        tags,
        summary: "Update a remote location",
        description: "Changes its `label`. The name cannot change.",
        protect: true,
        errorResponses: { 404: NOT_FOUND, 409: BUILT_IN, 422: "No fields were provided" },
      },
    })
    .input(locationPatchInput)
    .use(audited)
    .output(dataOf(location))
    .mutation(async ({ ctx, input }) => ({
      data: await updateLocation({ db: ctx.db, input, names: ctx.probeDefaults }),
    })),

  delete: apiProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/locations/{location}",
        tags,
        summary: "Delete a remote location",
        description: "Refused (409) while a probe or a project's default_locations names " +
          "it. Its schedules go with it; its results stay until the retention.",
        protect: true,
        errorResponses: { 404: NOT_FOUND, 409: "Location is in use" },
      },
      success: { 204: "Location deleted; no body" },
    })
    .input(locationRef)
    .use(audited)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteLocation({ db: ctx.db, location: input.location, names: ctx.probeDefaults });
    }),

  rotateToken: apiProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/locations/{location}/token",
        tags,
        summary: "Replace a remote location's token",
        description: "Answers the new token (`data.token`) this once; the old one stops " +
          "working at once.",
        protect: true,
        errorResponses: { 404: NOT_FOUND, 409: BUILT_IN },
      },
    })
    // No input but the path: no body or `{}`; anything else is refused (422).
    .input(z.strictObject({ location: nameInPath }))
    .use(audited)
    .output(dataOf(locationWithToken))
    .mutation(async ({ ctx, input }) => ({
      data: await rotateLocationToken({
        db: ctx.db,
        location: input.location,
        names: ctx.probeDefaults,
      }),
    })),
});
