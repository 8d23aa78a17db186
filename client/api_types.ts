/**
 * The input and output of every operation, derived from the router's type and the shared zod
 * schemas. `deno task build:client` writes these out in full for the npm package, so its
 * declarations need neither the server's source nor zod.
 *
 * @module
 */
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { ErrorBody } from "@probe/shared";
import type { AppRouter } from "@probe/server/router";

type Inputs = inferRouterInputs<AppRouter>;
type Outputs = inferRouterOutputs<AppRouter>;

/** A project as read back: name, label, description and status. */
export type Project = Outputs["projects"]["get"]["data"];
/** A probe as read back. */
export type Probe = Outputs["probes"]["get"]["data"];
/** The global I'm alive reporting settings. */
export type IamAliveSettings = Outputs["settings"]["getIamAlive"]["data"];
/** One I'm alive report, the same on every channel. */
export type IamAliveReport = Outputs["settings"]["testIamAlive"]["data"]["report"];
/** The outcome of sending one report over one channel. */
export type IamAliveDelivery = Outputs["settings"]["listIamAliveDeliveries"]["data"][number];
/** One run of a probe as stored: when, how long, its outcome, HTTP status, error and address. */
export type ProbeResult = Outputs["results"]["list"]["data"][number];
/** What a run came to: `up` and `degraded` count towards uptime, `down` and `blocked` do not. */
export type Outcome = ProbeResult["outcome"];
/** A statistics window: `1h`, `24h`, `7d`, `30d` or `90d`. */
export type StatsWindow = Outputs["results"]["stats"]["data"]["window"];
/** A probe's counts per outcome, uptime and latency percentiles over a window. */
export type ProbeStats = Outputs["results"]["stats"]["data"];
/** One probe's line on a project's status board: last outcome and 24-hour uptime. */
export type ProbeStatus = Outputs["results"]["status"]["data"][number];
/** One line of an error's details: the path of the field and what is wrong with it. */
export type ErrorDetail = NonNullable<ErrorBody["error"]["details"]>[number];

/** `projects.create`: the new project's name, and an optional label and description. */
export type ProjectCreateInput = Inputs["projects"]["create"];
/** `projects.create`: `{ data: { project } }`. */
export type ProjectCreateResult = Outputs["projects"]["create"];
/** `projects.list`: an optional exact project name to filter by. */
export type ProjectListInput = Inputs["projects"]["list"];
/** `projects.list`: `{ data: Project[], meta: { count } }`. */
export type ProjectListResult = Outputs["projects"]["list"];
/** `projects.get` and `projects.delete`: the project's name. */
export type ProjectRef = Inputs["projects"]["get"];
/** `projects.get`: `{ data: Project }`. */
export type ProjectGetResult = Outputs["projects"]["get"];
/** `projects.update`: the project's name and the fields to change (null clears label and description). */
export type ProjectUpdateInput = Inputs["projects"]["update"];
/** `projects.update`: `{ data: { project } }`. */
export type ProjectUpdateResult = Outputs["projects"]["update"];
/** `projects.delete`: what was done, and a message. */
export type ProjectDeleteResult = Outputs["projects"]["delete"];

/** `probes.create`: a probe of the project named in `project` (REST: `POST /projects/{project}/probes`). */
export type ProbeCreateInput = Inputs["probes"]["create"];
/** `probes.createWithProject`: the same, as REST's `POST /probes` takes it. */
export type ProbeCreateWithProjectInput = Inputs["probes"]["createWithProject"];
/** Both probe creates: the probe written, and whether it is new (`meta.created`). */
export type ProbeCreateResult = Outputs["probes"]["create"];
/** `probes.list`: an optional exact project name to filter by. */
export type ProbeListInput = Inputs["probes"]["list"];
/** `probes.list` and `probes.listByProject`: `{ data: Probe[], meta: { count } }`. */
export type ProbeListResult = Outputs["probes"]["list"];
/** `probes.listByProject`: the project's name. */
export type ProbeListByProjectInput = Inputs["probes"]["listByProject"];
/** `probes.get` and `probes.delete`: the project's name and the probe's id. */
export type ProbeRef = Inputs["probes"]["get"];
/** `probes.get`: `{ data: Probe }`. */
export type ProbeGetResult = Outputs["probes"]["get"];
/** `probes.update`: the probe and the fields to change; a new URL or method gives a new id. */
export type ProbeUpdateInput = Inputs["probes"]["update"];
/** `probes.update`: the probe as written, with its (possibly new) id. */
export type ProbeUpdateResult = Outputs["probes"]["update"];

/** `settings.getIamAlive`: `{ data: IamAliveSettings }`. */
export type IamAliveGetResult = Outputs["settings"]["getIamAlive"];
/** `settings.updateIamAlive`: the fields to change; interval or channels alone turn reporting on. */
export type IamAliveUpdateInput = Inputs["settings"]["updateIamAlive"];
/** `settings.updateIamAlive`: the settings after the update. */
export type IamAliveUpdateResult = Outputs["settings"]["updateIamAlive"];
/** `settings.testIamAlive`: the report sent and each selected channel's outcome. */
export type IamAliveTestResult = Outputs["settings"]["testIamAlive"];
/**
 * `settings.listIamAliveDeliveries`: how many, newest first (1 to 500, default 50). The router
 * takes any value and coerces it, as query strings need; the client asks for a number.
 */
export type IamAliveDeliveriesInput = Inputs["settings"]["listIamAliveDeliveries"] & {
  limit?: number;
};
/** `settings.listIamAliveDeliveries`: `{ data: IamAliveDelivery[], meta: { count } }`. */
export type IamAliveDeliveriesResult = Outputs["settings"]["listIamAliveDeliveries"];

/**
 * `results.list`: the probe, and how many results (1 to 1000, default 100) older than `before`
 * (an ISO time, for example a previous page's `meta.next_before`). The router takes any `limit`
 * and coerces it, as query strings need; the client asks for a number.
 */
export type ResultsListInput = Inputs["results"]["list"] & { limit?: number };
/** `results.list`: `{ data: ProbeResult[], meta: { count, next_before } }`, newest first. */
export type ResultsListResult = Outputs["results"]["list"];
/** `results.stats`: the probe, and the window (default `24h`). */
export type ResultsStatsInput = Inputs["results"]["stats"];
/** `results.stats`: `{ data: ProbeStats }`. */
export type ResultsStatsResult = Outputs["results"]["stats"];
/** `results.status`: the project's name. */
export type ResultsStatusInput = Inputs["results"]["status"];
/** `results.status`: `{ data: ProbeStatus[], meta: { count, status } }`, by URL. */
export type ResultsStatusResult = Outputs["results"]["status"];
