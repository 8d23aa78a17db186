// @ts-check
/** Creating and editing a probe: every field of the API, its messages beside each field. */
import { useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { get, patch, post, probePath, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { href, navigate } from "./routes.js";
import { ErrorNote, Loading } from "./parts.js";
import { Field, FieldError, FormError, namesOrNull, parseJsonField, useForm } from "./forms.js";
import { AssertionsEditor, assertionsState, expectOf } from "./assertions.js";
import { useNotice } from "./notice.js";
/** @import { FormBody, Probe, ProbeCreate, ProbeUpdate } from "./api_types.d.ts" */

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
/** The fields folded under "More settings": a new probe needs none of them. */
const ADVANCED = [
  "method",
  "latency",
  "interval_seconds",
  "timeout_ms",
  "locations",
  "headers",
  "body",
];
/** In the order the form shows them: the first refused is the one focused. */
const FIELDS = ["url", "label", "expect", ...ADVANCED];

/**
 * `Name: value` lines to an object; lines without a colon are an error on the field.
 * @param {string} text
 */
function parseHeaders(text) {
  /** @type {Record<string, string>} */
  const headers = {};
  const lines = text.split("\n");
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    const colon = line.indexOf(":");
    if (colon < 1) {
      throw new FieldError({ headers: `Line ${i + 1}: write each header as Name: value` });
    }
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

const headerLines = (/** @type {Record<string, string> | undefined} */ headers) =>
  Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}`).join("\n");

const jsonText = (/** @type {unknown} */ value) =>
  value === null || value === undefined ? "" : JSON.stringify(value, null, 2);

/**
 * A number when the text is one; otherwise the text, for the API to refuse in its words.
 * @param {string} text
 */
function latencyValue(text) {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const number = Number(trimmed);
  return Number.isFinite(number) ? number : trimmed;
}

/** A number field's text; empty for null (the service-wide setting). */
const numberText = (/** @type {number | null | undefined} */ value) =>
  value === null || value === undefined ? "" : String(value);

/**
 * The form's fields as text, from the probe being edited (or empty for a new one).
 * @param {Probe | undefined} probe
 */
function initialValues(probe) {
  return {
    url: probe?.url ?? "",
    method: probe?.method ?? "GET",
    label: probe?.label ?? "",
    latency: probe?.latency === null || probe?.latency === undefined ? "" : String(probe.latency),
    interval_seconds: numberText(probe?.interval_seconds),
    timeout_ms: numberText(probe?.timeout_ms),
    locations: (probe?.locations ?? []).join(", "),
    headers: headerLines(probe?.headers),
    body: jsonText(probe?.body),
  };
}

/**
 * The headers and body fields parsed; a FieldError naming each field that does not parse.
 * @param {{ headers: string, body: string }} values
 */
function parsedFields(values) {
  /** @type {Record<string, string>} */
  const fieldErrors = {};
  /** @type {{ headers?: unknown, body?: unknown }} */
  const parsed = {};
  /** @type {["headers" | "body", (text: string) => unknown][]} */
  const parsers = [["headers", parseHeaders], ["body", (t) => parseJsonField("body", t)]];
  for (const [name, parse] of parsers) {
    try {
      parsed[name] = parse(values[name]);
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      Object.assign(fieldErrors, error.fields);
    }
  }
  if (Object.keys(fieldErrors).length) throw new FieldError(fieldErrors);
  return parsed;
}

/**
 * Saves the probe: a PATCH of every field when editing (what was emptied is cleared), else a
 * create without the empty optional fields. Answers the probe's id and what happened.
 * @param {string} project
 * @param {Probe | undefined} probe
 * @param {FormBody<ProbeCreate>} definition
 * @param {unknown} requestBody
 * @returns {Promise<[string, "saved" | "created" | "rewritten"]>}
 */
async function sendProbe(project, probe, definition, requestBody) {
  if (probe) {
    const answer = await patch(
      probePath(project, probe.probe_id),
      /** @type {ProbeUpdate} */ ({ ...definition, body: requestBody ?? null }),
    );
    return [answer.data.probe_id, "saved"];
  }
  const body = { ...definition };
  if (requestBody !== undefined) body.body = requestBody;
  /** @type {(keyof typeof body)[]} */
  const optional = ["latency", "interval_seconds", "timeout_ms", "locations", "label", "expect"];
  for (const name of optional) {
    if (body[name] === null) delete body[name];
  }
  const answer = await post(`/projects/${seg(project)}/probes`, /** @type {ProbeCreate} */ (body));
  return [answer.data.probe_id, answer.meta?.created === false ? "rewritten" : "created"];
}

/**
 * @param {{
 *   project: string,
 *   probe?: Probe,
 *   onSaved: (probeId: string, how: "saved" | "rewritten" | "created") => void,
 * }} props
 */
function ProbeForm({ project, probe, onSaved }) {
  const form = useForm(FIELDS);
  const [values, setValues] = useState(() => initialValues(probe));
  const [assertions, setAssertions] = useState(() => assertionsState(probe?.expect));
  /** @param {keyof typeof values} name */
  const set = (name) => (/** @type {string} */ value) =>
    setValues((v) => ({ ...v, [name]: value }));
  // Opened once a folded field holds something other than its default (a probe edited) or the API
  // refused one, and kept open: it never folds away under the reader.
  const unfolded = useRef(false);
  unfolded.current ||= ADVANCED.some((name) =>
    name in form.errors ||
    (name === "method"
      ? values.method !== "GET"
      : String(values[/** @type {keyof typeof values} */ (name)] ?? "").trim() !== "")
  );
  /** @param {SubmitEvent} event */
  const onSubmit = (event) => {
    event.preventDefault();
    form.submit(async () => {
      const parsed = parsedFields(values);
      /** @type {FormBody<ProbeCreate>} */
      const definition = {
        url: values.url,
        method: values.method,
        headers: parsed.headers,
        latency: latencyValue(values.latency),
        // Empty: null, the service-wide setting (PROBE_INTERVAL_SECONDS, PROBE_TIMEOUT_MS).
        interval_seconds: latencyValue(values.interval_seconds),
        timeout_ms: latencyValue(values.timeout_ms),
        // Empty: null, the project's default_locations.
        locations: namesOrNull(values.locations),
        label: values.label.trim() === "" ? null : values.label,
        expect: expectOf(assertions),
      };
      const [probeId, how] = await sendProbe(project, probe, definition, parsed.body);
      onSaved(probeId, how);
    });
  };
  return view`
    <form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate>
      <${FormError} message=${form.formError} />
      <${Field} name="url" label="URL" type="url" inputmode="url" autocomplete="off"
        value=${values.url} onInput=${set("url")} error=${form.errors.url}
        hint="An absolute http:// or https:// URL." />
      <${Field} name="label" label="Label (optional)" value=${values.label}
        onInput=${
    set("label")
  } error=${form.errors.label} hint="A name for the probe in lists and alerts." />
      <${AssertionsEditor} state=${assertions} onChange=${setAssertions}
        details=${form.details.expect} />
      <details class="more" open=${unfolded.current || undefined}>
      <summary>More settings: method, expected latency, interval, timeout, locations, headers, body</summary>
      <${Field} name="method" label="Method" as="select" options=${METHODS} value=${values.method}
        onInput=${set("method")} error=${form.errors.method} />
      <${Field} name="latency" label="Expected latency in ms (optional)" inputmode="numeric"
        value=${values.latency} onInput=${set("latency")} error=${form.errors.latency}
        hint="Slower answers count as degraded." />
      <${Field} name="interval_seconds" label="Interval in seconds (optional)" inputmode="numeric"
        value=${values.interval_seconds} onInput=${set("interval_seconds")}
        error=${form.errors.interval_seconds}
        hint="How often it runs, 10 to 86400. Empty: the service's interval." />
      <${Field} name="timeout_ms" label="Timeout in ms (optional)" inputmode="numeric"
        value=${values.timeout_ms} onInput=${set("timeout_ms")} error=${form.errors.timeout_ms}
        hint="How long a run may take, 100 to 120000. Empty: the service's timeout." />
      <${Field} name="locations" label="Locations (optional)" autocomplete="off"
        value=${values.locations} onInput=${set("locations")} error=${form.errors.locations}
        hint="Where it runs: location names, comma-separated (see Locations). Empty: the project's default." />
      <${Field} name="headers" label="Headers (optional)" as="textarea" rows="3"
        value=${values.headers} onInput=${set("headers")} error=${form.errors.headers}
        hint="One per line, as Name: value." spellcheck=${false} />
      <${Field} name="body" label="Request body (optional, JSON)" as="textarea" rows="3"
        value=${values.body} onInput=${set("body")} error=${form.errors.body} spellcheck=${false} />
      </details>
      <div class="actions">
        <button type="submit" class="primary" disabled=${form.busy}>
            ${probe ? "Save probe" : "Create probe"}
          </button>
        <a class="button" href=${
    probe ? href.probe(project, probe.probe_id) : href.project(project)
  }>
            Cancel
          </a>
      </div>
    </form>
  `;
}

/** @param {{ project: string }} props */
export function NewProbe({ project }) {
  useTitle(`New probe in ${project}`);
  const notice = useNotice();
  /** @param {string} probeId @param {string} how */
  const saved = (probeId, how) => {
    notice(`The probe was ${how}.`);
    navigate(href.probe(project, probeId));
  };
  return view`
    <div>
      <p class="crumbs">
          <a href=${href.overview()}>Overview</a> › <a href=${href.project(project)}>${project}</a>
        </p>
      <div class="page-head">
        <h1 tabindex="-1">New probe in ${project}</h1>
      </div>
      <${ProbeForm} project=${project} onSaved=${saved} />
    </div>
  `;
}

/** @param {{ project: string, probeId: string }} props */
export function EditProbe({ project, probeId }) {
  const notice = useNotice();
  const { data, error } = useLoad(() => get(probePath(project, probeId)), [project, probeId]);
  const probe = data?.data;
  useTitle(`Edit ${probe?.label ?? "probe"}`);
  /** @param {string} newId @param {string} how */
  const saved = (newId, how) => {
    notice(`The probe was ${how}.`);
    navigate(href.probe(project, newId));
  };
  return view`<div>
    <p class="crumbs">
      <a href=${href.overview()}>Overview</a> › <a href=${
    href.project(project)
  }>${project}</a>${" › "}<a
        href=${href.probe(project, probeId)}>${probe?.label ?? probeId}</a>
    </p>
    <div class="page-head"><h1 tabindex="-1">Edit probe</h1></div>
    <${ErrorNote} error=${error} />
    ${!probe && !error && view`<${Loading} what="Loading the probe" />`}
    ${
    probe &&
    view`<${ProbeForm} key=${probeId} project=${project} probe=${probe} onSaved=${saved} />`
  }
  </div>`;
}
