/**
 * The types of the dashboard's API calls (`api.js`), read from the OpenAPI document's types that
 * `deno task openapi:generate` generates from the procedures' zod schemas (`shared/`): a path the
 * dashboard calls is matched, segment by segment, against the document's path templates, and the
 * call answers what that operation answers and takes the body it takes. Types only: never served,
 * checked by `deno check` (docs/dashboard.md, "Type checking").
 *
 * @module
 */
import type { paths } from "./openapi.gen.ts";

/** The methods the dashboard calls with. */
export type Method = "get" | "post" | "patch" | "delete";

/** A path template of the document: `/projects/{project}/probes/{probeId}`. */
export type Template = keyof paths;

/** `/projects/{project}` as the paths it stands for: `/projects/${string}`. */
type Pattern<T extends string> = T extends `${infer Head}{${string}}${infer Tail}`
  ? `${Head}${string}${Pattern<Tail>}`
  : T;

/** A template's operation for a method, if it has one. */
type Operation<M extends Method, T extends Template> = paths[T][M] extends { responses: unknown }
  ? paths[T][M]
  : never;

/** Every path (with or without a query) that some template of `M` may stand for. */
export type PathFor<M extends Method> = {
  [T in Template]: [Operation<M, T>] extends [never] ? never
    : Pattern<T> | `${Pattern<T>}?${string}`;
}[Template];

type Split<P extends string> = P extends `${infer Head}/${infer Tail}` ? [Head, ...Split<Tail>]
  : [P];
type WithoutQuery<P extends string> = P extends `${infer Path}?${string}` ? Path : P;
type QueryOf<P extends string> = P extends `${string}?${infer Query}` ? Query : "";

/** Whether one segment of a path is a segment of the template (`{name}` takes any). */
type SegmentMatches<S extends string, T extends string> = T extends `{${string}}` ? true
  : [S] extends [T] ? ([T] extends [S] ? true : false)
  : false;

type SegmentsMatch<S extends string[], T extends string[]> = S extends [] ? (T extends [] ? true
    : false)
  : S extends [infer SH extends string, ...infer SR extends string[]]
    ? T extends [infer TH extends string, ...infer TR extends string[]]
      ? SegmentMatches<SH, TH> extends true ? SegmentsMatch<SR, TR> : false
    : false
  : false;

/**
 * The template a path of the dashboard calls (`/projects/${string}/probes/${string}/run`), by
 * method; never when none matches.
 */
export type TemplateOf<M extends Method, P extends string> = {
  [T in Template]: [Operation<M, T>] extends [never] ? never
    : SegmentsMatch<Split<WithoutQuery<P>>, Split<T>> extends true ? T
    : never;
}[Template];

/** The names in a query (`a=1&b=${string}`). */
type QueryNames<Q extends string> = Q extends "" ? never
  : Q extends `${infer Name}=${string}&${infer Rest}` ? Name | QueryNames<Rest>
  : Q extends `${infer Name}=${string}` ? Name
  : Q;

/** The query parameters an operation takes. */
type QueryParameters<O> = O extends { parameters: { query?: infer Q } }
  ? [Q] extends [undefined] ? never : keyof NonNullable<Q>
  : never;

/** The names of a path's query that its operation does not take. */
export type UnknownQuery<M extends Method, P extends string> = Exclude<
  QueryNames<QueryOf<P>>,
  QueryParameters<Operation<M, TemplateOf<M, P>>>
>;

/**
 * A path the dashboard may call with `M`: `P` itself when it matches a template and names only
 * query parameters of that operation; otherwise a type that says what is wrong, so the call fails
 * to check.
 */
export type Checked<M extends Method, P extends string> = [TemplateOf<M, P>] extends [never]
  ? `no ${Uppercase<M>} operation has this path`
  : [UnknownQuery<M, P>] extends [never] ? P
  : `the query names ${UnknownQuery<M, P>}, which this operation does not take`;

/** What a success of an operation answers: its JSON body, or null for 204. */
type Success<O> = O extends { responses: infer R } ? {
    [S in keyof R]: S extends 200 | 201
      ? R[S] extends { content: { "application/json": infer B } } ? B
      : never
      : S extends 204 ? null
      : never;
  }[keyof R]
  : never;

/** What a call of `M` on a template answers when it succeeds. */
export type Answer<M extends Method, T extends Template> = Success<Operation<M, T>>;

/** What a call of `M` on a path answers when it succeeds. */
export type AnswerOf<M extends Method, P extends string> = Answer<M, TemplateOf<M, P>>;

/** The JSON body an operation takes, as the arguments after the path (none, optional, required). */
type BodyArguments<O> = O extends { requestBody: { content: { "application/json": infer B } } }
  ? [body: B]
  : O extends { requestBody?: { content: { "application/json": infer B } } } ? [body?: B]
  : [];

/** The JSON body of `M` on a template. */
export type Body<M extends Method, T extends Template> = BodyArguments<
  Operation<M, T>
> extends [body?: infer B] ? B
  : never;

/**
 * The arguments after a path: `Args` for a path that `Checked` lets through; otherwise one
 * argument that cannot be given, named by what is wrong (the call fails to check).
 */
type After<M extends Method, P extends string, Args extends unknown[]> = Checked<M, P> extends P
  ? Args
  : [path_problem: Checked<M, P>];

/** The body arguments of `M` on a path. */
type BodyOf<M extends Method, P extends string> = BodyArguments<Operation<M, TemplateOf<M, P>>>;

/** `GET path`, answering the operation's success body. */
export type Get = <P extends PathFor<"get">>(
  path: P,
  ...rest: After<"get", P, []>
) => Promise<AnswerOf<"get", P>>;

/** Starts `GET path` for a later `getPrefetched(path)`. */
export type Prefetch = <P extends PathFor<"get">>(path: P, ...rest: After<"get", P, []>) => void;

/** `POST path` with the operation's JSON body (none when it takes none). */
export type Post = <P extends PathFor<"post">>(
  path: P,
  ...body: After<"post", P, BodyOf<"post", P>>
) => Promise<AnswerOf<"post", P>>;

/** `PATCH path` with the operation's JSON body. */
export type Patch = <P extends PathFor<"patch">>(
  path: P,
  ...body: After<"patch", P, BodyOf<"patch", P>>
) => Promise<AnswerOf<"patch", P>>;

/** `DELETE path`. */
export type Del = <P extends PathFor<"delete">>(
  path: P,
  ...rest: After<"delete", P, []>
) => Promise<AnswerOf<"delete", P>>;

/** The `data` of a GET's answer, by template. */
type Data<T extends Template> = NonNullable<Answer<"get", T>> extends { data: infer D } ? D
  : never;

/** `GET /whoami`: what the key may do. */
export type Whoami = Data<"/whoami">;
/** The overview (`GET /overview`). */
export type Overview = Data<"/overview">;
/** A project of the overview, with its probes. */
export type OverviewProject = Overview["projects"][number];
/** A probe's line on the overview: state, last run, uptimes, p95, sparkline. */
export type OverviewProbe = OverviewProject["probes"][number];
/** An incident as listed (`GET /incidents`, the overview's open ones). */
export type Incident = Data<"/incidents">[number];
/** A project as read back. */
export type Project = Data<"/projects/{project}">;
/** A probe as read back. */
export type Probe = Data<"/projects/{project}/probes/{probeId}">;
/** One run of a probe (`…/results`, and what run-now answers). */
export type ProbeResult = Data<"/projects/{project}/probes/{probeId}/results">[number];
/** One assertion a run failed. */
export type FailedCheck = NonNullable<ProbeResult["failed_checks"]>[number];
/** A probe's buckets over a window (`…/series`). */
export type Series = Data<"/projects/{project}/probes/{probeId}/series">;
/** One bucket of a series. */
export type Bucket = Series["buckets"][number];
/** The body of a probe's creation. */
export type ProbeCreate = Body<"post", "/projects/{project}/probes">;
/** The body of a probe's edit. */
export type ProbeUpdate = Body<"patch", "/projects/{project}/probes/{probeId}">;
/** The body of a project's creation. */
export type ProjectCreate = Body<"post", "/projects">;
/** A heartbeat as read back (docs/heartbeats.md). */
export type Heartbeat = Data<"/projects/{project}/heartbeats/{name}">;
/** One of a heartbeat's kept pings, with its body. */
export type HeartbeatPing = Data<"/projects/{project}/heartbeats/{name}/pings">[number];
/** The body of a heartbeat's creation. */
export type HeartbeatCreate = Body<"post", "/projects/{project}/heartbeats">;
/** The body of a heartbeat's edit. */
export type HeartbeatUpdate = Body<"patch", "/projects/{project}/heartbeats/{name}">;

/**
 * A body as a form sends it: the operation's field names (a name it lacks fails to check), each
 * with what was typed into it. The API checks the values and answers 422 in its own words, which
 * the form shows beside the field; so a form passes its body on as the operation's
 * (`/** @type {ProbeCreate} *\/ (body)`).
 */
export type FormBody<B> = { [K in keyof B]?: unknown };
