// @ts-check
/**
 * Creating and editing a probe: its kind (HTTP(S), TCP, TLS, DNS: `kinds.js`), the fields that
 * kind takes, its messages beside each field.
 */
import { useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { get, patch, post, probePath, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { href, navigate } from "./routes.js";
import { ErrorNote, Loading } from "./parts.js";
import { Field, FieldError, FormError, namesOrNull, parseJsonField, useForm } from "./forms.js";
import { AssertionsEditor, assertionsState, expectOf } from "./assertions.js";
import { useNotice } from "./notice.js";
import { DNS_TYPES, kindNamed, kindOf, KINDS, urlOf, urlPartAt, urlParts } from "./kinds.js";
/** @import { FormBody, Probe, ProbeCreate, ProbeUpdate } from "./api_types.d.ts" */
/** @import { Kind, UrlParts } from "./kinds.js" */

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
/** The fields folded under "More settings": a new probe needs none of them. */
const ADVANCED = [
  "method",
  "latency",
  "interval_seconds",
  "timeout_ms",
  "locations",
  "depends_on",
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
  const kind = kindOf(probe?.url ?? "");
  const parts = urlParts(probe?.url ?? "");
  return {
    kind: kind.name,
    url: kind.name === "http" ? probe?.url ?? "" : "",
    host: parts.host,
    port: parts.port,
    name: parts.name,
    type: parts.type,
    send: typeof probe?.body === "string" && kind.name !== "http" ? probe.body : "",
    method: probe?.method ?? "GET",
    label: probe?.label ?? "",
    latency: probe?.latency === null || probe?.latency === undefined ? "" : String(probe.latency),
    interval_seconds: numberText(probe?.interval_seconds),
    timeout_ms: numberText(probe?.timeout_ms),
    locations: (probe?.locations ?? []).join(", "),
    depends_on: (probe?.depends_on ?? []).join(", "),
    headers: headerLines(probe?.headers),
    body: kind.name === "http" ? jsonText(probe?.body) : "",
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
 * The kind chooser: a radio group. A probe keeps its kind once made (its URL's scheme): editing
 * shows it without a choice.
 * @param {{ kind: Kind, onChange: (name: string) => void, fixed: boolean }} props
 */
function KindChoice({ kind, onChange, fixed }) {
  if (fixed) {
    return view`<p class="kind-fixed">Kind: <span class="tag">${kind.tag}</span>
      <span class="hint">A probe keeps its kind: for another, create a new probe.</span></p>`;
  }
  return view`<fieldset class="choices" name="kind">
    <legend>Kind</legend>
    ${
    KINDS.map((k) =>
      view`<label class="choice">
        <input type="radio" name="probe-kind" value=${k.name} checked=${k === kind}
          onChange=${() => onChange(k.name)} />
        ${k.title}
      </label>`
    )
  }
  </fieldset>`;
}

/**
 * Where a TCP, TLS or DNS probe connects, as parts of its URL: host and port, and for DNS the
 * resolver, the name looked up and the record type. The API's message about the URL goes beside
 * the part it names (`urlPartAt`).
 * @param {{ kind: Kind, values: UrlParts, set: (name: keyof UrlParts) => (value: string) => void,
 *   error?: string }} props
 */
function Where({ kind, values, set, error }) {
  const dns = kind.name === "dns";
  const at = error ? urlPartAt(error) : null;
  /** @param {keyof UrlParts} part */
  const errorAt = (part) => (at === part ? error : undefined);
  return view`<fieldset class="where" name="url">
    <legend>${dns ? "The query" : "Where it connects"}</legend>
    <${Field} name="host" label=${dns ? "Resolver" : "Host"} autocomplete="off"
      spellcheck=${false} value=${values.host} onInput=${set("host")} error=${errorAt("host")}
      hint=${
    dns
      ? "The DNS server asked: a name or an address (1.1.1.1)."
      : "A host name or an address (db.example.com, 10.0.0.5)."
  } />
    <${Field} name="port" label=${dns ? "Port (optional)" : "Port"} inputmode="numeric"
      autocomplete="off" value=${values.port} onInput=${set("port")} error=${errorAt("port")}
      hint=${dns ? "Empty: 53." : kind.name === "tls" ? "443, 465, 993…" : "5432, 6379, 25…"} />
    ${
    dns && view`
      <${Field} name="name" label="Name to look up" autocomplete="off" spellcheck=${false}
        value=${values.name} onInput=${set("name")} error=${errorAt("name")}
        hint="A domain name: example.com." />
      <${Field} name="type" label="Record type" as="select" options=${DNS_TYPES}
        value=${values.type} onInput=${set("type")} error=${errorAt("type")} />`
  }
  </fieldset>`;
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
  const chosen = kindNamed(values.kind);
  const [assertions, setAssertions] = useState(() => assertionsState(probe?.expect, chosen));
  /** @param {keyof typeof values} name */
  const set = (name) => (/** @type {string} */ value) =>
    setValues((v) => ({ ...v, [name]: value }));
  const http = chosen.name === "http";
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
      // An HTTP URL field holding a tcp://, tls:// or dns:// URL makes a probe of that kind.
      const url = http ? values.url : urlOf(chosen, values);
      const kind = http ? kindOf(url) : chosen;
      if (!http && values.host.trim() === "") {
        throw new FieldError({ url: `Name a ${chosen.name === "dns" ? "resolver" : "host"}.` });
      }
      const parsed = kind.name === "http"
        ? parsedFields(values)
        : { body: kind.uses.body && values.send !== "" ? values.send : undefined };
      /** @type {FormBody<ProbeCreate>} */
      const definition = {
        url,
        ...(kind.uses.method && { method: values.method }),
        ...(kind.uses.headers && { headers: parsed.headers }),
        latency: latencyValue(values.latency),
        // Empty: null, the service-wide setting (PROBE_INTERVAL_SECONDS, PROBE_TIMEOUT_MS).
        interval_seconds: latencyValue(values.interval_seconds),
        timeout_ms: latencyValue(values.timeout_ms),
        // Empty: null, the project's default_locations.
        locations: namesOrNull(values.locations),
        // Empty: none (a rewrite or an edit drops what it depended on).
        depends_on: namesOrNull(values.depends_on) ?? [],
        label: values.label.trim() === "" ? null : values.label,
        expect: expectOf(assertions, kind),
      };
      const [probeId, how] = await sendProbe(project, probe, definition, parsed.body);
      onSaved(probeId, how);
    });
  };
  const measures = chosen.measures;
  return view`
    <form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate>
      <${FormError} message=${form.formError} />
      <${KindChoice} kind=${chosen} onChange=${set("kind")} fixed=${probe !== undefined} />
      ${
    http
      ? view`<${Field} name="url" label="URL" type="url" inputmode="url" autocomplete="off"
        value=${values.url} onInput=${set("url")} error=${form.errors.url}
        hint="An absolute http:// or https:// URL." />`
      : view`<${Where} kind=${chosen} values=${values} set=${set} error=${form.errors.url} />`
  }
      ${
    !http && chosen.uses.body && view`<${Field} name="body" label="Send (optional)" as="textarea"
        rows="2" value=${values.send} onInput=${set("send")} error=${form.errors.body}
        spellcheck=${false}
        hint="Text sent once connected (PING, or a protocol's greeting); the answer is read for the checks below." />`
  }
      <${Field} name="label" label="Label (optional)" value=${values.label}
        onInput=${
    set("label")
  } error=${form.errors.label} hint="A name for the probe in lists and alerts." />
      <${AssertionsEditor} state=${assertions} onChange=${setAssertions}
        details=${form.details.expect} kind=${chosen} />
      <details class="more" open=${unfolded.current || undefined}>
      <summary>More settings: ${
    http ? "method, expected latency" : `expected ${measures}`
  }, interval, timeout, locations${http ? ", headers, body" : ""}</summary>
      ${
    http && view`<${Field} name="method" label="Method" as="select" options=${METHODS}
        value=${values.method} onInput=${set("method")} error=${form.errors.method} />`
  }
      <${Field} name="latency" label=${
    http ? "Expected latency in ms (optional)" : `Expected ${measures} in ms (optional)`
  } inputmode="numeric"
        value=${values.latency} onInput=${set("latency")} error=${form.errors.latency}
        hint=${http ? "Slower answers count as degraded." : "Slower runs count as degraded."} />
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
      <${Field} name="depends_on" label="Depends on (optional)" autocomplete="off"
        value=${values.depends_on} onInput=${set("depends_on")} error=${form.errors.depends_on}
        hint="Probe ids of this project, comma-separated. While one is down, this probe's alerts wait for it." />
      ${
    http && view`<${Field} name="headers" label="Headers (optional)" as="textarea" rows="3"
        value=${values.headers} onInput=${set("headers")} error=${form.errors.headers}
        hint="One per line, as Name: value." spellcheck=${false} />
      <${Field} name="body" label="Request body (optional, JSON)" as="textarea" rows="3"
        value=${values.body} onInput=${
      set("body")
    } error=${form.errors.body} spellcheck=${false} />`
  }
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
