// @ts-check
/**
 * A project's maintenance windows (`/projects/{project}/maintenance`): those under way, upcoming
 * and past, each deleted after asking again, and a form to add one. Times are entered and shown
 * in UTC, as everywhere in the dashboard. A read-only key sees the lists only.
 */
import { useState } from "preact/hooks";
import { view } from "./view.js";
/** @import { ApiError } from "./api.js" */
import { useCanWrite } from "./scope.js";
import { del, get, post, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { At, ConfirmButton, describe, ErrorNote, Loading, StatusNote } from "./parts.js";
import { FieldError, FormError, useForm } from "./forms.js";
import { ProjectSettingsHead, TextField } from "./settings_parts.js";
import { duration } from "./format.js";

/** @import { Answer } from "./api_types.d.ts" */
/** @typedef {NonNullable<Answer<"get", "/projects/{project}/maintenance">>["data"][number]} Window */

const HOUR = 3_600_000;
/** The least time between now and the start the new-window form offers. */
const LEAD = 300_000;

/**
 * `2031-03-01 08:00`: a time as the fields show it, in UTC, as every time of the dashboard is
 * written (a `datetime-local` field would show it in the browser's own format, `03/01/2031, 08:00
 * AM`).
 */
const fieldTime = (/** @type {number} */ ms) =>
  new Date(ms).toISOString().slice(0, 16).replace("T", " ");

/** `2031-03-01 08:00`, with `T` or a space, with or without seconds. */
const FIELD_TIME = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d)(:\d\d(?:\.\d+)?)?$/;

/**
 * The ISO time (UTC) a field's text stands for; FieldError when empty or not a date and time.
 * @param {"starts_at" | "ends_at"} name
 * @param {string} text
 */
function utcOf(name, text) {
  const value = text.trim();
  if (!value) throw new FieldError({ [name]: "Enter a date and a time (UTC)" });
  const parts = FIELD_TIME.exec(value);
  if (!parts) {
    throw new FieldError({ [name]: "Write it as 2031-03-01 08:00 (a date, then a 24-hour time)" });
  }
  const iso = `${parts[1]}T${parts[2]}${parts[3] ?? ":00"}Z`;
  // A day or an hour the calendar does not have (2026-02-30, 24:00) reads as another one.
  const time = Date.parse(iso);
  if (Number.isNaN(time) || new Date(time).toISOString().slice(0, 16) !== iso.slice(0, 16)) {
    throw new FieldError({
      [name]: `There is no ${parts[1]} ${
        parts[2]
      }: write a real date and a 24-hour time, as 2031-03-01 08:00`,
    });
  }
  return iso;
}

/**
 * @param {{ project: string, onAdded: (message: string) => void }} props
 */
function NewWindow({ project, onAdded }) {
  const form = useForm(["starts_at", "ends_at", "reason"]);
  // The next full hour at least five minutes ahead: one seconds away would be under way, not
  // upcoming, by the time the form is sent.
  const nextHour = Math.ceil((Date.now() + LEAD) / HOUR) * HOUR;
  const [values, setValues] = useState({
    starts_at: fieldTime(nextHour),
    ends_at: fieldTime(nextHour + HOUR),
    reason: "",
  });
  const set = (/** @type {"starts_at" | "ends_at" | "reason"} */ name) =>
  (
    /** @type {string} */ value,
  ) => setValues((old) => ({ ...old, [name]: value }));
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      const body = {
        starts_at: utcOf("starts_at", values.starts_at),
        ends_at: utcOf("ends_at", values.ends_at),
        reason: values.reason.trim() === "" ? null : values.reason,
      };
      const answer = await post(`/projects/${seg(project)}/maintenance`, body);
      setValues((old) => ({ ...old, reason: "" }));
      onAdded(`Maintenance window added: ${when(answer.data)}.`);
    });
  };
  return view`<form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
    aria-labelledby="new-window-title">
    <h2 id="new-window-title">Add a window</h2>
    <p class="muted">Runs that start inside it are still made and kept, but they do not change
      a probe's state, open no incident, notify nobody, and do not count toward uptime.</p>
    <${FormError} message=${form.formError} />
    <div class="settings-grid">
      <${TextField} idPrefix="window" name="starts_at" label="Starts (UTC)"
        autocomplete="off" spellcheck=${false} value=${values.starts_at} onInput=${set("starts_at")}
        error=${form.errors.starts_at} hint="As 2031-03-01 08:00: a date, then a 24-hour time, in UTC. Included." />
      <${TextField} idPrefix="window" name="ends_at" label="Ends (UTC)"
        autocomplete="off" spellcheck=${false} value=${values.ends_at} onInput=${
    set("ends_at")
  } error=${form.errors.ends_at}
        hint="Not included; at most 366 days after the start." />
    </div>
    <${TextField} idPrefix="window" name="reason" label="Reason (optional)" as="textarea" rows="2"
      value=${values.reason} onInput=${set("reason")} error=${form.errors.reason}
      hint="Up to 500 characters. Not shown on the public status page." />
    <div class="actions">
      <button type="submit" class="primary" disabled=${form.busy}>Add window</button>
    </div>
  </form>`;
}

/** `2031-03-01 08:00 UTC to 10:00 UTC (2 h 0 min)`. */
function when(/** @type {Window} */ w) {
  const seconds = Math.round((Date.parse(w.ends_at) - Date.parse(w.starts_at)) / 1000);
  const start = new Date(w.starts_at).toISOString().replace("T", " ").slice(0, 16);
  const end = new Date(w.ends_at).toISOString().replace("T", " ").slice(0, 16);
  const sameDay = start.slice(0, 10) === end.slice(0, 10);
  return `${start} to ${sameDay ? end.slice(11) : end} UTC (${duration(seconds)})`;
}

/**
 * One list of windows as a table.
 * @param {{ title: string, id: string, windows: Window[], empty: string,
 *   onDelete: (w: Window) => Promise<void> }} props
 */
function WindowTable({ title, id, windows, empty, onDelete }) {
  const canWrite = useCanWrite();
  return view`<section aria-labelledby=${id}>
    <h2 id=${id}>${title} (${windows.length})</h2>
    ${
    windows.length === 0 ? view`<p class="muted">${empty}</p>` : view`<div class="table-wrap">
      <table class="grid">
        <caption class="sr-only">${title} maintenance windows</caption>
        <thead>
          <tr>
            <th scope="col">Starts</th>
            <th scope="col">Ends</th>
            <th scope="col">Length</th>
            <th scope="col">Reason</th>
            ${canWrite && view`<th scope="col"><span class="sr-only">Actions</span></th>`}
          </tr>
        </thead>
        <tbody>
          ${
      windows.map((w) =>
        view`<tr key=${w.id}>
            <td data-label="Starts"><${At} iso=${w.starts_at} /></td>
            <td data-label="Ends"><${At} iso=${w.ends_at} /></td>
            <td data-label="Length">${
          duration(Math.round((Date.parse(w.ends_at) - Date.parse(w.starts_at)) / 1000))
        }</td>
            <td data-label="Reason">${w.reason ?? view`<span class="muted">—</span>`}</td>
            ${
          canWrite && view`<td data-label="Delete">
              <${ConfirmButton} label="Delete" confirmLabel="Delete window"
                question=${`Delete the window from ${when(w)}?`} onConfirm=${() => onDelete(w)} />
            </td>`
        }
          </tr>`
      )
    }
        </tbody>
      </table>
    </div>`
  }
  </section>`;
}

/** @param {{ project: string }} props */
export function MaintenancePage({ project }) {
  useTitle(`Maintenance of ${project}`);
  const canWrite = useCanWrite();
  const [message, setMessage] = useState("");
  const [failure, setFailure] = useState(/** @type {ApiError | null} */ (null));
  const { data, error, loading, reload } = useLoad(
    () => get(`/projects/${seg(project)}/maintenance`),
    [project],
  );
  const windows = data?.data ?? [];
  const active = windows.filter((w) => w.state === "active");
  const upcoming = windows.filter((w) => w.state === "upcoming");
  const past = windows.filter((w) => w.state === "past").reverse();
  const changed = (/** @type {string} */ text) => {
    setFailure(null);
    setMessage(text);
    reload();
  };
  const remove = async (/** @type {Window} */ w) => {
    try {
      await del(`/projects/${seg(project)}/maintenance/${seg(w.id)}`);
      changed(`The window from ${when(w)} was deleted.`);
    } catch (e) {
      setFailure(/** @type {ApiError} */ (e));
    }
  };
  return view`<div>
    <${ProjectSettingsHead} project=${project} title="Maintenance" current="maintenance" />
    <${StatusNote} message=${message} />
    ${failure && view`<p class="error" role="alert">${describe(failure)}</p>`}
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the maintenance windows" />`}
    ${
    data && view`
      <${WindowTable} title="Under way" id="active-title" windows=${active}
        empty="No maintenance under way." onDelete=${remove} />
      <${WindowTable} title="Upcoming" id="upcoming-title" windows=${upcoming}
        empty="None planned." onDelete=${remove} />
      <${WindowTable} title="Past" id="past-title" windows=${past} empty="None yet."
        onDelete=${remove} />
    `
  }
    ${canWrite && view`<${NewWindow} project=${project} onAdded=${changed} />`}
  </div>`;
}
