// @ts-check
/**
 * Creating and editing a heartbeat: its name, a period or a cron schedule with its time zone,
 * the grace, and the optional longest and shortest run; the API's messages beside each field.
 */
import { useState } from "preact/hooks";
import { view } from "./view.js";
import { get, patch, post, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { href, navigate } from "./routes.js";
import { ErrorNote, Loading } from "./parts.js";
import { Field, FormError, useForm } from "./forms.js";
import { useNotice } from "./notice.js";
import { heartbeatPath } from "./heartbeats.js";
/** @import { ApiError } from "./api.js" */
/** @import { FormBody, Heartbeat, HeartbeatCreate, HeartbeatUpdate } from "./api_types.d.ts" */

/** In the order the form shows them: the first refused is the one focused. */
const FIELDS = [
  "name",
  "period_seconds",
  "schedule",
  "timezone",
  "grace_seconds",
  "max_duration_seconds",
  "min_duration_seconds",
];

/** A number field's text; empty for null. */
const numberText = (/** @type {number | null | undefined} */ value) =>
  value === null || value === undefined ? "" : String(value);

/**
 * A number when the text is one, null when empty; otherwise the text, for the API to refuse in
 * its own words beside the field.
 * @param {string} text
 */
export function numberOrNull(text) {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const number = Number(trimmed);
  return Number.isFinite(number) ? number : trimmed;
}

/** The zone the browser is in, the schedule's first guess. */
const browserZone = () => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
};

/**
 * The form's fields as text, from the heartbeat being edited (or the defaults for a new one).
 * @param {Heartbeat | undefined} h
 */
function initialValues(h) {
  return {
    name: h?.name ?? "",
    timing: h?.schedule ? "schedule" : "period",
    period_seconds: h ? numberText(h.period_seconds) : "3600",
    schedule: h?.schedule ?? "",
    timezone: h?.timezone ?? browserZone(),
    grace_seconds: h ? String(h.grace_seconds) : "300",
    max_duration_seconds: numberText(h?.max_duration_seconds),
    min_duration_seconds: numberText(h?.min_duration_seconds),
  };
}

/**
 * What the form sends: the period or the schedule and its zone, never both.
 * @param {ReturnType<typeof initialValues>} v
 * @param {boolean} editing null clears an optional field on an edit; a new one leaves it out
 */
export function timingBody(v, editing) {
  /** @type {Record<string, unknown>} */
  const body = v.timing === "schedule"
    ? { schedule: v.schedule, timezone: v.timezone.trim() || "UTC" }
    : { period_seconds: numberOrNull(v.period_seconds) };
  body.grace_seconds = numberOrNull(v.grace_seconds);
  for (const name of ["max_duration_seconds", "min_duration_seconds"]) {
    const value = numberOrNull(v[/** @type {"max_duration_seconds"} */ (name)]);
    if (value !== null || editing) body[name] = value;
  }
  if (body.grace_seconds === null) delete body.grace_seconds;
  return body;
}

/**
 * @param {{ project: string, heartbeat?: Heartbeat }} props
 */
function HeartbeatForm({ project, heartbeat }) {
  const editing = heartbeat !== undefined;
  const form = useForm(FIELDS);
  const notice = useNotice();
  const [values, setValues] = useState(() => initialValues(heartbeat));
  /** @param {keyof typeof values} name */
  const set = (name) => (/** @type {string} */ value) =>
    setValues((v) => ({ ...v, [name]: value }));
  /** @param {SubmitEvent} event */
  const onSubmit = (event) => {
    event.preventDefault();
    form.submit(async () => {
      const timing = timingBody(values, editing);
      if (heartbeat) {
        /** @type {FormBody<HeartbeatUpdate>} */
        const body = timing;
        await patch(
          heartbeatPath(project, heartbeat.name),
          /** @type {HeartbeatUpdate} */ (body),
        );
        notice(`Heartbeat ${heartbeat.name} was saved.`);
        navigate(href.heartbeat(project, heartbeat.name));
        return;
      }
      /** @type {FormBody<HeartbeatCreate>} */
      const body = { name: values.name, ...timing };
      try {
        await post(`/projects/${seg(project)}/heartbeats`, /** @type {HeartbeatCreate} */ (body));
      } catch (thrown) {
        const error = /** @type {ApiError} */ (thrown);
        // A name taken is the name's problem: said beside it.
        if (error.code === "conflict") {
          error.details = [{ path: "name", message: error.message }];
        }
        throw error;
      }
      notice(`Heartbeat ${values.name} was created: copy its ping URL below.`);
      navigate(href.heartbeat(project, values.name));
    });
  };
  const byCron = values.timing === "schedule";
  const back = heartbeat ? href.heartbeat(project, heartbeat.name) : href.project(project);
  return view`
    <form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate>
      <${FormError} message=${form.formError} />
      ${
    !editing && view`<${Field} name="name" label="Name" value=${values.name}
        onInput=${set("name")} error=${form.errors.name} autocomplete="off"
        hint="Letters, digits, '.', '_' and '-'; it names the heartbeat in its project and cannot be changed later." />`
  }
      <fieldset class="choices">
        <legend>The job runs</legend>
        <label class="choice">
          <input type="radio" name="timing" value="period" checked=${!byCron}
            onChange=${() => set("timing")("period")} />
          every so many seconds
        </label>
        <label class="choice">
          <input type="radio" name="timing" value="schedule" checked=${byCron}
            onChange=${() => set("timing")("schedule")} />
          on a cron schedule
        </label>
      </fieldset>
      ${
    byCron
      ? view`
        <${Field} name="schedule" label="Cron schedule" value=${values.schedule}
          onInput=${set("schedule")} error=${form.errors.schedule} autocomplete="off"
          spellcheck=${false} placeholder="30 2 * * *"
          hint="Five fields (minute hour day month weekday), or six with seconds first: when the job runs." />
        <${Field} name="timezone" label="Time zone" value=${values.timezone}
          onInput=${set("timezone")} error=${form.errors.timezone} autocomplete="off"
          spellcheck=${false}
          hint="The IANA zone the schedule is read in (Europe/Berlin, America/New_York, UTC); daylight-saving changes follow it." />`
      : view`
        <${Field} name="period_seconds" label="Period (seconds)" value=${values.period_seconds}
          onInput=${set("period_seconds")} error=${form.errors.period_seconds}
          inputmode="numeric" autocomplete="off"
          hint="How often the job runs: 10 s to a year (3600 is an hour, 86400 a day)." />`
  }
      <${Field} name="grace_seconds" label="Grace (seconds)" value=${values.grace_seconds}
        onInput=${set("grace_seconds")} error=${form.errors.grace_seconds}
        inputmode="numeric" autocomplete="off"
        hint="How late the ping may come before the heartbeat is down." />
      <${Field} name="max_duration_seconds" label="Longest run (seconds, optional)"
        value=${values.max_duration_seconds} onInput=${set("max_duration_seconds")}
        error=${form.errors.max_duration_seconds} inputmode="numeric" autocomplete="off"
        hint="After a /start ping, the success must come within this; empty: the grace." />
      <${Field} name="min_duration_seconds" label="Shortest run (seconds, optional)"
        value=${values.min_duration_seconds} onInput=${set("min_duration_seconds")}
        error=${form.errors.min_duration_seconds} inputmode="numeric" autocomplete="off"
        hint="A success sooner than this after its /start is a failure (a job that did nothing); empty: none." />
      <div class="actions">
        <button type="submit" class="primary" disabled=${form.busy}>
          ${editing ? "Save heartbeat" : "Create heartbeat"}
        </button>
        <a class="button" href=${back}>Cancel</a>
      </div>
    </form>
  `;
}

/** @param {{ project: string }} props */
export function NewHeartbeat({ project }) {
  useTitle("New heartbeat");
  return view`<div>
    <p class="crumbs">
      <a href=${href.overview()}>Overview</a> › <a href=${href.project(project)}>${project}</a>
    </p>
    <div class="page-head"><h1 tabindex="-1">New heartbeat</h1></div>
    <p class="muted">
      A job (a backup, a cron job, a queue consumer) calls the heartbeat's ping URL when it has run;
      no ping by the deadline, a failure ping or a run of the wrong length is an alert.
    </p>
    <${HeartbeatForm} project=${project} />
  </div>`;
}

/** @param {{ project: string, name: string }} props */
export function EditHeartbeat({ project, name }) {
  useTitle(`Edit ${name}`);
  const { data, error, loading } = useLoad(() => get(heartbeatPath(project, name)), [
    project,
    name,
  ]);
  return view`<div>
    <p class="crumbs">
      <a href=${href.overview()}>Overview</a> › <a href=${href.project(project)}>${project}</a> ›
      <a href=${href.heartbeat(project, name)}>${name}</a>
    </p>
    <div class="page-head"><h1 tabindex="-1">Edit heartbeat ${name}</h1></div>
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the heartbeat" />`}
    ${data && view`<${HeartbeatForm} project=${project} heartbeat=${data.data} />`}
  </div>`;
}
