// @ts-check
/**
 * A probe's assertions (`expect`, docs/assertions.md) as a person writes and reads them: the
 * probe form's fields for status codes and classes, body text, JSON pointer checks, header checks
 * and certificate days; the probe page's list of them in words. The API's messages for `expect`
 * (`details[].path` such as `json.1.value`) are shown beside the part they name.
 */
import { useEffect, useState } from "preact/hooks";
import { view } from "./view.js";
import { HEADER_OPS, JSON_OPS, opWords } from "./check_words.js";
import { lowerFirst, sentence } from "./messages.js";
import { KINDS } from "./kinds.js";
/** @import { ComponentChildren } from "preact" */
/** @import { Probe } from "./api_types.d.ts" */
/** @import { Kind } from "./kinds.js" */
/** @typedef {NonNullable<Probe["expect"]>} Expect */
/** @typedef {NonNullable<Expect["json"]>[number]} JsonCheck */
/** @typedef {NonNullable<Expect["headers"]>[number]} HeaderCheck */
/** @typedef {string | number | boolean | null} Scalar */
/**
 * A JSON check as the form edits it: the value as typed, and the type it is read as.
 * @typedef {{ path: string, op: string, type: string, value: string }} JsonRowState
 */
/** @typedef {{ name: string, op: string, value: string }} HeaderRowState */
/**
 * The form's state for an `expect`. `records`: a DNS probe's "a record equals" lines, each a JSON
 * check that the list of records holds it (`{"path": "", "op": "contains", "value": …}`).
 * @typedef {{ status: string, contains: string, not_contains: string, records: string,
 *   json: JsonRowState[], headers: HeaderRowState[], certificate_days: string }} AssertionsState
 */

const HTTP = KINDS[0];

const PRESENCE = ["exists", "not_exists"];
const NUMERIC = ["lt", "le", "gt", "ge"];
/**
 * What a JSON check's value is read as.
 * @type {[string, string][]}
 */
const VALUE_TYPES = [
  ["text", "text"],
  ["number", "number"],
  ["true", "true"],
  ["false", "false"],
  ["null", "null"],
];

/**
 * A JSON value as it reads in a sentence: strings quoted, the rest as JSON.
 * @param {unknown} value
 */
const shown = (value) => (typeof value === "string" ? `"${value}"` : JSON.stringify(value));

/** @param {string} text */
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * A DNS probe's JSON check that one of its records equals a text: the form's `records` line.
 * @param {JsonCheck} c
 */
const isRecordCheck = (c) => c.path === "" && c.op === "contains" && typeof c.value === "string";

/**
 * The assertions of an `expect` in words, one line each, in the order the API checks them.
 * `kind`: the probe's (an HTTP probe's status rule applies even when unnamed; a TCP probe has
 * none, and its `body` is the answer).
 * @param {Expect | null | undefined} expect
 * @param {Kind} [kind]
 * @returns {string[]}
 */
export function assertionLines(expect, kind = HTTP) {
  if (!expect) return [];
  const lines = [];
  if (kind.expects.includes("status")) {
    lines.push(
      !expect.status
        ? "Status is below 400 (the default)"
        : expect.status.length === 1
        ? `Status is ${expect.status[0]}`
        : `Status is one of ${expect.status.join(", ")}`,
    );
  }
  const answer = capital(kind.answer);
  for (const text of expect.body?.contains ?? []) lines.push(`${answer} contains ${shown(text)}`);
  for (const text of expect.body?.not_contains ?? []) {
    lines.push(`${answer} does not contain ${shown(text)}`);
  }
  for (const c of expect.json ?? []) {
    if (kind.name === "dns" && isRecordCheck(c)) {
      lines.push(`A record equals ${shown(c.value)}`);
      continue;
    }
    const at = c.path === "" ? "The whole JSON body" : `JSON ${c.path}`;
    lines.push(
      `${at} ${opWords(JSON_OPS, c.op)}${c.value === undefined ? "" : ` ${shown(c.value)}`}`,
    );
  }
  for (const c of expect.headers ?? []) {
    lines.push(
      `Header ${c.name} ${opWords(HEADER_OPS, c.op)}${
        c.value === undefined ? "" : ` ${shown(c.value)}`
      }`,
    );
  }
  if (expect.certificate_days !== undefined) {
    lines.push(`TLS certificate valid for at least ${expect.certificate_days} more days`);
  }
  return lines;
}

/**
 * A probe's assertions as a list of readable rows; its kind's rule when it has none.
 * @param {{ expect: Expect | null, kind?: Kind }} props
 */
export function AssertionList({ expect, kind = HTTP }) {
  const lines = assertionLines(expect, kind);
  if (lines.length === 0) return view`<span>${kind.passes} passes (the default)</span>`;
  return view`<ul class="assertions">
    ${lines.map((line) => view`<li>${line}</li>`)}
  </ul>`;
}

/**
 * The type a JSON check's value is edited as.
 * @param {unknown} value
 */
function typeOf(value) {
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  return typeof value === "number" ? "number" : "text";
}

/**
 * The form's state for an `expect` (or null): text for the fields, a row per JSON or header
 * check; for a DNS probe, its checks that a record equals a text as lines of `records`.
 * @param {Expect | null | undefined} expect
 * @param {Kind} [kind]
 * @returns {AssertionsState}
 */
export function assertionsState(expect, kind = HTTP) {
  const dns = kind.name === "dns";
  const records = dns ? (expect?.json ?? []).filter(isRecordCheck) : [];
  return {
    status: (expect?.status ?? []).join(", "),
    contains: (expect?.body?.contains ?? []).join("\n"),
    not_contains: (expect?.body?.not_contains ?? []).join("\n"),
    records: records.map((c) => String(c.value)).join("\n"),
    json: (expect?.json ?? []).filter((c) => !records.includes(c)).map((c) => ({
      path: c.path,
      op: c.op,
      type: c.value === undefined ? "text" : typeOf(c.value),
      value: c.value === undefined || c.value === null || typeof c.value === "boolean"
        ? ""
        : String(c.value),
    })),
    headers: (expect?.headers ?? []).map((c) => ({
      name: c.name,
      op: c.op,
      value: c.value === undefined || c.value === null ? "" : String(c.value),
    })),
    certificate_days: expect?.certificate_days === undefined ? "" : String(expect.certificate_days),
  };
}

/**
 * A number when the text is one, otherwise the text: the API refuses it in its words.
 * @param {string} text
 */
function numberOrText(text) {
  const trimmed = text.trim();
  return trimmed !== "" && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}

/**
 * A JSON check's value as sent, from its type and text.
 * @param {JsonRowState} row
 * @returns {Scalar | undefined}
 */
function jsonValue(row) {
  if (PRESENCE.includes(row.op)) return undefined;
  const type = NUMERIC.includes(row.op) ? "number" : row.type;
  if (type === "null") return null;
  if (type === "true") return true;
  if (type === "false") return false;
  return type === "number" ? numberOrText(row.value) : row.value;
}

/** @param {string} text */
const lines = (text) => text.split("\n").map((l) => l.trim()).filter((l) => l !== "");

/**
 * The `expect` the form's state stands for: null when no assertion is filled in (the kind's
 * default rule). Only the checks the kind takes: a part the form hides for it is not sent. Sent
 * as typed, for the API to refuse what is wrong in its words.
 * @param {AssertionsState} state
 * @param {Kind} [kind]
 * @returns {Record<string, unknown> | null}
 */
export function expectOf(state, kind = HTTP) {
  /** @type {Record<string, unknown>} */
  const expect = {};
  const takes = (/** @type {Kind["expects"][number]} */ key) => kind.expects.includes(key);
  const status = takes("status") ? state.status.split(/[\s,]+/).filter((s) => s !== "") : [];
  if (status.length) {
    expect.status = status.map((s) => (/^\d+$/.test(s) ? Number(s) : s.toLowerCase()));
  }
  const contains = takes("body") ? lines(state.contains) : [];
  const notContains = takes("body") ? lines(state.not_contains) : [];
  if (contains.length || notContains.length) {
    /** @type {Record<string, string[]>} */
    const body = {};
    if (contains.length) body.contains = contains;
    if (notContains.length) body.not_contains = notContains;
    expect.body = body;
  }
  const records = kind.name === "dns" ? lines(state.records) : [];
  if (takes("json") && (records.length || state.json.length)) {
    expect.json = [
      ...records.map((value) => ({ path: "", op: "contains", value })),
      ...state.json.map((row) => {
        const value = jsonValue(row);
        return value === undefined
          ? { path: row.path.trim(), op: row.op }
          : { path: row.path.trim(), op: row.op, value };
      }),
    ];
  }
  if (takes("headers") && state.headers.length) {
    expect.headers = state.headers.map((row) =>
      PRESENCE.includes(row.op)
        ? { name: row.name.trim(), op: row.op }
        : { name: row.name.trim(), op: row.op, value: row.value }
    );
  }
  if (takes("certificate_days") && state.certificate_days.trim() !== "") {
    expect.certificate_days = numberOrText(state.certificate_days);
  }
  return Object.keys(expect).length ? expect : null;
}

/**
 * The API's details for `expect` by the part they name: `status`, `contains`, `not_contains`,
 * `certificate_days`, `json.0.value`, `headers.1`; the rest under `""`. Each as a sentence; a
 * message about one of several lines says which line. The first `records` JSON checks are the
 * lines of `records` (`expectOf` sends them first): theirs go there, the rest are renumbered.
 * @param {{ path: string, message: string }[] | undefined} details
 * @param {number} [records]
 * @returns {Record<string, string>}
 */
export function assertionErrors(details, records = 0) {
  /** @type {Record<string, string>} */
  const at = {};
  /**
   * @param {string} key
   * @param {string} text
   */
  const add = (key, text) => {
    at[key] = at[key] ? `${at[key]}; ${text}` : text;
  };
  for (const { path, message } of details ?? []) {
    const text = sentence(message);
    const parts = String(path).split(".").filter((p) => p !== "");
    const [head, second, third] = parts;
    if (head === "status" || head === "certificate_days") {
      add(head, second === undefined ? text : `Entry ${Number(second) + 1}: ${lowerFirst(text)}`);
    } else if (head === "body" && (second === "contains" || second === "not_contains")) {
      add(second, third === undefined ? text : `Line ${Number(third) + 1}: ${lowerFirst(text)}`);
    } else if (head === "json" && Number(second) < records) {
      add("records", `Line ${Number(second) + 1}: ${lowerFirst(text)}`);
    } else if ((head === "json" || head === "headers") && second !== undefined) {
      const at = head === "json" ? String(Number(second) - records) : second;
      add(third === undefined ? `${head}.${at}` : `${head}.${at}.${third}`, text);
    } else add("", text);
  }
  return at;
}

/**
 * A labelled control of the assertions editor, with its hint and its error.
 * @param {{ id: string, label: string, hint?: string | null, error?: string,
 *   children: ComponentChildren }} props
 */
function Part({ id, label, hint, error, children }) {
  return view`<div class=${error ? "field invalid" : "field"}>
    <label for=${id}>${label}</label>
    ${children}
    ${hint && view`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
    ${error && view`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
  </div>`;
}

/**
 * The attributes that tie a control to its hint and error.
 * @param {string} id
 * @param {unknown} hint
 * @param {string | undefined} error
 */
function described(id, hint, error) {
  const ids = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ");
  return { id, "aria-describedby": ids || undefined, "aria-invalid": error ? "true" : undefined };
}

/** @param {{ options: [string, string][], value: string }} props */
function Options({ options, value }) {
  return options.map(([v, text]) =>
    view`<option value=${v} selected=${v === value}>${text}</option>`
  );
}

/**
 * One JSON check: pointer, operator, value type and value; removable.
 * @param {{ row: JsonRowState, index: number, errors: Record<string, string>,
 *   onChange: (row: JsonRowState) => void, onRemove: () => void }} props
 */
function JsonRow({ row, index, errors, onChange, onRemove }) {
  const id = `assert-json-${index}`;
  /** @param {keyof JsonRowState} key */
  const set = (key) => (/** @type {Event} */ e) =>
    onChange({ ...row, [key]: /** @type {HTMLInputElement} */ (e.currentTarget).value });
  const needsValue = !PRESENCE.includes(row.op);
  const numeric = NUMERIC.includes(row.op);
  const typed = needsValue && !numeric;
  const showValue = needsValue && (numeric || row.type === "text" || row.type === "number");
  const error = (/** @type {string} */ part) => errors[`json.${index}.${part}`];
  return view`<fieldset class="assert-row">
    <legend>JSON check ${index + 1}</legend>
    ${errors[`json.${index}`] && view`<p class="field-error">${errors[`json.${index}`]}</p>`}
    <${Part} id=${`${id}-path`} label="JSON pointer" error=${error("path")}
      hint=${index === 0 ? "/status, /items/0/id; empty for the whole body." : null}>
      <input ...${described(`${id}-path`, index === 0, error("path"))} value=${row.path}
        spellcheck=${false} autocomplete="off" onInput=${set("path")} />
    <//>
    <${Part} id=${`${id}-op`} label="Check" error=${error("op")}>
      <select ...${described(`${id}-op`, false, error("op"))} onChange=${set("op")}>
        <${Options} options=${JSON_OPS} value=${row.op} />
      </select>
    <//>
    ${
    typed && view`<${Part} id=${`${id}-type`} label="Value type">
      <select id=${`${id}-type`} onChange=${set("type")}>
        <${Options} options=${VALUE_TYPES} value=${row.type} />
      </select>
    <//>`
  }
    ${
    showValue && view`<${Part} id=${`${id}-value`} label=${numeric ? "Number" : "Value"}
      error=${error("value")}>
      <input ...${described(`${id}-value`, false, error("value"))} value=${row.value}
        inputmode=${numeric || row.type === "number" ? "decimal" : undefined} spellcheck=${false}
        autocomplete="off" onInput=${set("value")} />
    <//>`
  }
    ${
    needsValue && !showValue && error("value") &&
    view`<p class="field-error">${error("value")}</p>`
  }
    <button type="button" aria-label=${`Remove JSON check ${index + 1}`}
      onClick=${onRemove}>Remove</button>
  </fieldset>`;
}

/**
 * One header check: name, operator, value; removable.
 * @param {{ row: HeaderRowState, index: number, errors: Record<string, string>,
 *   onChange: (row: HeaderRowState) => void, onRemove: () => void }} props
 */
function HeaderRow({ row, index, errors, onChange, onRemove }) {
  const id = `assert-header-${index}`;
  /** @param {keyof HeaderRowState} key */
  const set = (key) => (/** @type {Event} */ e) =>
    onChange({ ...row, [key]: /** @type {HTMLInputElement} */ (e.currentTarget).value });
  const error = (/** @type {string} */ part) => errors[`headers.${index}.${part}`];
  return view`<fieldset class="assert-row">
    <legend>Header check ${index + 1}</legend>
    ${errors[`headers.${index}`] && view`<p class="field-error">${errors[`headers.${index}`]}</p>`}
    <${Part} id=${`${id}-name`} label="Header name" error=${error("name")}>
      <input ...${described(`${id}-name`, false, error("name"))} value=${row.name}
        spellcheck=${false} autocomplete="off" onInput=${set("name")} />
    <//>
    <${Part} id=${`${id}-op`} label="Check" error=${error("op")}>
      <select ...${described(`${id}-op`, false, error("op"))} onChange=${set("op")}>
        <${Options} options=${HEADER_OPS} value=${row.op} />
      </select>
    <//>
    ${
    !PRESENCE.includes(row.op) && view`<${Part} id=${`${id}-value`} label="Text"
      error=${error("value")}>
      <input ...${described(`${id}-value`, false, error("value"))} value=${row.value}
        spellcheck=${false} autocomplete="off" onInput=${set("value")} />
    <//>`
  }
    <button type="button" aria-label=${`Remove header check ${index + 1}`}
      onClick=${onRemove}>Remove</button>
  </fieldset>`;
}

/** @typedef {"status" | "contains" | "not_contains" | "records" | "certificate_days"} TextPart */

/**
 * The assertions as fields: `state` from `assertionsState`, changed through `onChange`;
 * `details` are the API's details for `expect` (paths below it). Only the checks `kind` takes
 * are shown.
 * @param {{ state: AssertionsState, onChange: (state: AssertionsState) => void,
 *   details?: { path: string, message: string }[], kind?: Kind }} props
 */
export function AssertionsEditor({ state, onChange, details, kind = HTTP }) {
  const dns = kind.name === "dns";
  const errors = assertionErrors(details, dns ? lines(state.records).length : 0);
  const takes = (/** @type {Kind["expects"][number]} */ key) => kind.expects.includes(key);
  const answer = capital(kind.answer);
  const [focusNext, setFocusNext] = useState(/** @type {string | null} */ (null));
  useEffect(() => {
    if (!focusNext) return;
    document.getElementById(focusNext)?.focus();
    setFocusNext(null);
  }, [focusNext]);
  /** @param {TextPart} key */
  const set = (key) => (/** @type {Event} */ e) =>
    onChange({ ...state, [key]: /** @type {HTMLInputElement} */ (e.currentTarget).value });
  /** @param {number} i */
  const setJson = (i) => (/** @type {JsonRowState} */ row) =>
    onChange({ ...state, json: state.json.map((r, j) => (j === i ? row : r)) });
  /** @param {number} i */
  const setHeader = (i) => (/** @type {HeaderRowState} */ row) =>
    onChange({ ...state, headers: state.headers.map((r, j) => (j === i ? row : r)) });
  /** @param {number} i */
  const removeJson = (i) => () => {
    onChange({ ...state, json: state.json.filter((_r, j) => j !== i) });
    setFocusNext("add-json-check");
  };
  /** @param {number} i */
  const removeHeader = (i) => () => {
    onChange({ ...state, headers: state.headers.filter((_r, j) => j !== i) });
    setFocusNext("add-header-check");
  };
  const addJson = () => {
    onChange({ ...state, json: [...state.json, { path: "", op: "eq", type: "text", value: "" }] });
    setFocusNext(`assert-json-${state.json.length}-path`);
  };
  const addHeader = () => {
    onChange({ ...state, headers: [...state.headers, { name: "", op: "contains", value: "" }] });
    setFocusNext(`assert-header-${state.headers.length}-name`);
  };
  /**
   * @param {TextPart} key
   * @param {string} label
   * @param {string} hint
   * @param {Record<string, string>} extra
   */
  const part = (key, label, hint, multiline = false, extra = {}) => {
    const id = `assert-${key}`;
    const attrs = {
      ...extra,
      ...described(id, hint, errors[key]),
      value: state[key],
      spellcheck: "false",
      onInput: set(key),
    };
    return view`<${Part} id=${id} label=${label} hint=${hint} error=${errors[key]}>
      ${multiline ? view`<textarea rows="2" ...${attrs}></textarea>` : view`<input ...${attrs} />`}
    <//>`;
  };
  return view`<fieldset class="assertions-editor" name="expect">
    <legend>Assertions (optional)</legend>
    <p class="hint">What a run must show to pass; any failed assertion makes it down. Nothing
      here: ${kind.passes} passes.</p>
    ${errors[""] && view`<p class="field-error" role="alert">${errors[""]}</p>`}
    ${
    takes("status") && part(
      "status",
      "Status codes and classes",
      "Separated by commas: 200, 204, 2xx, 301. Empty: any status below 400 passes.",
    )
  }
    ${
    takes("body") && part(
      "contains",
      `${answer} must contain`,
      dns
        ? "One text per line, matched exactly in the records (one record per line, an MX as 10 mail.example.com)."
        : "One text per line, matched exactly.",
      true,
    )
  }
    ${
    takes("body") && part("not_contains", `${answer} must not contain`, "One text per line.", true)
  }
    ${
    dns && part(
      "records",
      "A record equals",
      "One value per line: one of the records must be exactly it (192.0.2.1).",
      true,
    )
  }
    ${
    takes("json") && state.json.map((row, i) =>
      view`<${JsonRow} key=${`json-${i}`} row=${row} index=${i} errors=${errors}
        onChange=${setJson(i)} onRemove=${removeJson(i)} />`
    )
  }
    ${
    takes("json") && view`<button type="button" id="add-json-check" onClick=${addJson}>
      Add JSON check
    </button>`
  }
    ${
    takes("headers") && state.headers.map((row, i) =>
      view`<${HeaderRow} key=${`header-${i}`} row=${row} index=${i} errors=${errors}
        onChange=${setHeader(i)} onRemove=${removeHeader(i)} />`
    )
  }
    ${
    takes("headers") && view`<button type="button" id="add-header-check" onClick=${addHeader}>
      Add header check
    </button>`
  }
    ${
    takes("certificate_days") && part(
      "certificate_days",
      "Certificate valid for at least (days)",
      kind.name === "tls"
        ? "The certificate must stay valid this many more days, 1 to 3650."
        : "https only: the TLS certificate must stay valid this many more days, 1 to 3650.",
      false,
      { inputmode: "numeric", autocomplete: "off" },
    )
  }
  </fieldset>`;
}
