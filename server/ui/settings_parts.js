// @ts-check
/**
 * Pieces the settings screens share (targets, alert policy, maintenance, status page, badges):
 * a project's settings navigation, a checkbox field, actions that say how they went, and a copy
 * button that works without the clipboard API too.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
/** @import { ApiError } from "./api.js" */
import { href } from "./routes.js";
import { describe } from "./parts.js";
import { useFocusBack } from "./focus.js";

/**
 * @typedef {"project" | "projectAlerts" | "maintenance" | "statusPage" | "badges"} ProjectPlace
 */

/** @type {[ProjectPlace, string][]} */
const PROJECT_PLACES = [
  ["project", "Probes"],
  ["projectAlerts", "Alerts"],
  ["maintenance", "Maintenance"],
  ["statusPage", "Status page"],
  ["badges", "Badges"],
];

/**
 * A project's pages: its probes and each of its settings, the current one marked; and its
 * incidents, open and resolved, on the incidents page.
 * @param {{ project: string, current: ProjectPlace }} props
 */
export function ProjectNav({ project, current }) {
  return view`<nav class="subnav" aria-label=${`Project ${project}`}>
    <ul>
      ${
    PROJECT_PLACES.map(([place, text]) =>
      view`<li key=${place}>
          <a href=${href[place](project)} aria-current=${place === current ? "page" : undefined}>
            ${text}
          </a>
        </li>`
    )
  }
      <li>
        <a href=${href.incidents(new URLSearchParams({ state: "all", project }).toString())}>
          Incidents
        </a>
      </li>
    </ul>
  </nav>`;
}

/**
 * The head of a project's settings page: where it is, its heading, the project's pages.
 * @param {{ project: string, title: string, current: ProjectPlace }} props
 */
export function ProjectSettingsHead({ project, title, current }) {
  return view`
    <p class="crumbs">
      <a href=${href.overview()}>Overview</a> › <a href=${href.project(project)}>${project}</a> ›
      ${" "}${title}
    </p>
    <div class="page-head">
      <h1 tabindex="-1">${title}</h1>
    </div>
    <${ProjectNav} project=${project} current=${current} />
  `;
}

/**
 * A labelled checkbox with an optional hint.
 * @param {{
 *   name: string,
 *   label: string,
 *   checked: boolean,
 *   onChange: (checked: boolean) => void,
 *   hint?: string,
 *   error?: string,
 *   idPrefix?: string,
 * }} props
 */
export function CheckField({ name, label, checked, onChange, hint, error, idPrefix = "field" }) {
  const id = `${idPrefix}-${name}`;
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ");
  return view`<div class=${error ? "field check invalid" : "field check"}>
    <span class="check-row">
      <input type="checkbox" id=${id} name=${name} checked=${checked}
        aria-describedby=${described || undefined} aria-invalid=${error ? "true" : undefined}
        onChange=${(/** @type {Event} */ e) =>
    onChange(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} />
      <label for=${id}>${label}</label>
    </span>
    ${hint && view`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
    ${error && view`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
  </div>`;
}

/**
 * @template T
 * @typedef {{
 *   busy: boolean,
 *   error: ApiError | null,
 *   result: T | null,
 *   run: (action: () => Promise<T>) => Promise<T | undefined>,
 *   clear: () => void,
 * }} Action
 */

/**
 * One action at a time (a test send, a rotation): whether it is under way, its result, its error.
 * @template T
 * @returns {Action<T>}
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const [result, setResult] = useState(/** @type {T | null} */ (null));
  const markFocus = useFocusBack();
  /** @param {() => Promise<T>} action */
  const run = async (action) => {
    const done = markFocus();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const value = await action();
      setResult(() => value);
      return value;
    } catch (e) {
      setError(/** @type {ApiError} */ (e));
      return undefined;
    } finally {
      setBusy(false);
      done();
    }
  };
  const clear = () => {
    setError(null);
    setResult(null);
  };
  return { busy, error, result, run, clear };
}

/**
 * A settings form's values as typed, and whether they were saved: `set(name)` is a field's
 * onInput or onChange, and a change after a save takes the "Saved." away.
 * @template {Record<string, unknown>} V
 * @param {V} initial
 */
export function useFormValues(initial) {
  const [values, setValues] = useState(initial);
  const [saved, setSaved] = useState(false);
  /** @param {keyof V} name */
  const set = (name) => (/** @type {unknown} */ value) => {
    setSaved(false);
    setValues((old) => ({ ...old, [name]: value }));
  };
  return { values, set, saved, setSaved };
}

/**
 * What an action said, announced: its error, or `text` when it went well.
 * @param {{ error?: ApiError | null, text?: string | null }} props
 */
export function ActionOutcome({ error, text }) {
  if (error) return view`<p class="error outcome" role="alert">${describe(error)}</p>`;
  return view`<p role="status" class="outcome">${text ?? ""}</p>`;
}

/**
 * Text to copy (a token's snippet): shown in a read-only box, with a Copy button. Where the
 * clipboard API is missing or refused (a page served over plain HTTP to another machine), the
 * text is selected instead and the user is told to press Ctrl+C.
 * @param {{ id: string, label: string, text: string }} props
 */
export function CopyBox({ id, label, text }) {
  const [said, setSaid] = useState("");
  // "Copied." was of the text before: a new text (another kind of badge) has not been copied.
  useEffect(() => setSaid(""), [text]);
  const box = useRef(/** @type {HTMLTextAreaElement | null} */ (null));
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid("Copied.");
    } catch {
      box.current?.focus();
      box.current?.select();
      setSaid("Selected: press Ctrl+C (⌘C) to copy.");
    }
  };
  // Room for the whole snippet at a desktop width; it scrolls on a phone.
  const rows = Math.min(6, Math.ceil(text.length / 64) + 1);
  return view`<div class="field copy">
    <label for=${id}>${label}</label>
    <textarea id=${id} readonly rows=${rows} ref=${box} spellcheck=${false} value=${text}></textarea>
    <span class="check-row">
      <button type="button" onClick=${copy}>Copy ${label}</button>
      <span role="status" class="outcome">${said}</span>
    </span>
  </div>`;
}

/**
 * A labelled text control with its hint and its error, as `Field` in forms.js, with ids that
 * start with `idPrefix`, so that two forms on one page (a new target and an edit) can both have a
 * field called `url`.
 * @param {{
 *   idPrefix: string,
 *   name: string,
 *   label: string,
 *   value: string,
 *   onInput: (value: string) => void,
 *   error?: string,
 *   hint?: string,
 *   as?: "input" | "textarea",
 *   [attribute: string]: any,
 * }} props
 */
export function TextField(
  { idPrefix, name, label, value, onInput, error, hint, as = "input", ...rest },
) {
  const id = `${idPrefix}-${name}`;
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ");
  const common = {
    id,
    name,
    value,
    "aria-invalid": error ? "true" : undefined,
    "aria-describedby": described || undefined,
    onInput: (/** @type {Event} */ e) =>
      onInput(/** @type {HTMLInputElement} */ (e.currentTarget).value),
    ...rest,
  };
  const control = as === "textarea"
    ? view`<textarea ...${common}></textarea>`
    : view`<input ...${common} />`;
  return view`<div class=${error ? "field invalid" : "field"}>
    <label for=${id}>${label}</label>
    ${control}
    ${hint && view`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
    ${error && view`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
  </div>`;
}

/**
 * A conflict's message with the reasons its details give (`Notification target is in use:
 * named by the alert policy's targets`); other errors as `describe` says them.
 * @param {ApiError} error
 */
export function conflictText(error) {
  if (error?.status !== 409 || !error.details?.length) return describe(error);
  const reasons = error.details.map((/** @type {{ message: string }} */ d) => d.message);
  return `${error.message}: ${reasons.join("; ")}.`;
}
