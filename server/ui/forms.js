// @ts-check
/**
 * Form fields that show the API's own validation messages next to the field they name
 * (`error.details[].path`), and the submit logic that puts them there.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { describe } from "./parts.js";
import { useFocusBack } from "./focus.js";
import { detailSentence, lowerFirst, sentence } from "./messages.js";
/** @import { ApiError } from "./api.js" */

/**
 * Splits an ApiError's details over the form's fields, each message as a sentence
 * (`messages.js`): a detail whose path starts with a field's name goes to that field
 * (`headers.x-a` to `headers`, as `x-a: must …`), the rest to the form, naming their field.
 * `details` keeps each field's details as sent (`{ path, message }`, the path below the field),
 * for a field made of parts (the assertions) to place them part by part.
 * @param {Pick<ApiError, "details">} error
 * @param {readonly string[]} fields
 */
export function placeErrors(error, fields) {
  /** @type {Record<string, string>} */
  const byField = {};
  /** @type {Record<string, { path: string, message: string }[]>} */
  const details = {};
  /** @type {string[]} */
  const rest = [];
  for (const { path, message } of error.details ?? []) {
    const [head, ...tail] = String(path).split(".");
    if (fields.includes(head)) {
      const text = tail.length
        ? detailSentence({ path: tail.join("."), message })
        : sentence(message);
      byField[head] = byField[head] ? `${byField[head]}; ${lowerFirst(text)}` : text;
      (details[head] ??= []).push({ path: tail.join("."), message });
    } else {
      rest.push(detailSentence({ path, message }));
    }
  }
  return { byField, details, rest };
}

/**
 * State for one form: `submit(action)` runs the action and, when the API refuses it, shows each
 * message beside its field and moves focus to the first field at fault.
 * @param {readonly string[]} fields
 */
export function useForm(fields) {
  const [errors, setErrors] = useState(/** @type {Record<string, string>} */ ({}));
  const [details, setDetails] = useState(
    /** @type {Record<string, { path: string, message: string }[]>} */ ({}),
  );
  const [formError, setFormError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const formRef = useRef(/** @type {HTMLFormElement | null} */ (null));
  /**
   * The fields at fault, focused once the form has drawn them (a field made of parts knows which
   * part is at fault only then); else focus goes back where the submit came from (`focus.js`).
   */
  const [faulty, setFaulty] = useState(/** @type {{ fields: string[] } | null} */ (null));
  useLayoutEffect(() => {
    if (faulty) focusFirst(faulty.fields);
  }, [faulty]);
  const markFocus = useFocusBack();

  /** @param {string[]} names */
  const focusFirst = (names) => {
    const first = fields.find((f) => names.includes(f));
    const element = formRef.current?.querySelector(`[name="${first}"]`);
    // A field made of parts (a fieldset): its first part at fault, else its first control.
    const target = element?.matches("fieldset")
      ? element.querySelector('[aria-invalid="true"]') ??
        element.querySelector("input, select, textarea")
      : element;
    /** @type {HTMLElement | null | undefined} */ (target)?.focus();
  };

  /** @param {() => Promise<void>} action */
  async function submit(action) {
    const done = markFocus();
    setBusy(true);
    setErrors({});
    setDetails({});
    setFormError(null);
    try {
      await action();
      done();
    } catch (error) {
      if (error instanceof FieldError) {
        setErrors(error.fields);
        setFaulty({ fields: Object.keys(error.fields) });
        return;
      }
      const refusal = /** @type {ApiError} */ (error);
      const { byField, details, rest } = placeErrors(refusal, fields);
      setErrors(byField);
      setDetails(details);
      const others = rest.length ? `${refusal.message}: ${rest.join("; ")}` : null;
      const placed = Object.keys(byField).length > 0;
      setFormError(others ?? (placed ? null : describe(refusal)));
      if (placed) setFaulty({ fields: Object.keys(byField) });
      else done();
    } finally {
      setBusy(false);
    }
  }
  return { errors, details, formError, busy, submit, formRef };
}

/** Thrown by a form for what it checks itself before sending (JSON it cannot parse). */
export class FieldError extends Error {
  /** @param {Record<string, string>} fields messages by field name */
  constructor(fields) {
    super("Some fields need attention");
    this.fields = fields;
  }
}

/**
 * A labelled control with its hint and its error. `as` is `input` (default), `textarea` or
 * `select` (with `options`).
 * @param {{
 *   name: string,
 *   label: string,
 *   error?: string,
 *   hint?: string,
 *   as?: "input" | "textarea" | "select",
 *   options?: string[],
 *   value: string,
 *   onInput: (value: string) => void,
 *   [attribute: string]: unknown,
 * }} props
 */
export function Field(
  { name, label, error, hint, as = "input", options = [], value, onInput, ...rest },
) {
  const id = `field-${name}`;
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ");
  const common = {
    id,
    name,
    value,
    "aria-invalid": error ? "true" : undefined,
    "aria-describedby": described || undefined,
    onInput: (/** @type {{ currentTarget: { value: string } }} */ e) =>
      onInput(e.currentTarget.value),
    ...rest,
  };
  let control;
  if (as === "textarea") control = view`<textarea ...${common}></textarea>`;
  else if (as === "select") {
    control = view`<select ...${common} onChange=${common.onInput} onInput=${undefined}>
      ${options.map((o) => view`<option value=${o}>${o}</option>`)}
    </select>`;
  } else control = view`<input ...${common} />`;
  return view`<div class=${error ? "field invalid" : "field"}>
    <label for=${id}>${label}</label>
    ${control}
    ${hint && view`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
    ${error && view`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
  </div>`;
}

/** The form's own error (not tied to a field), announced when it appears. */
/** @param {{ message: string | null }} props */
export function FormError({ message }) {
  return message ? view`<p class="error" role="alert">${message}</p>` : null;
}

/**
 * Comma-separated names typed into a field (`local, office`) as a list; empty text is null.
 * @param {string} text
 * @returns {string[] | null}
 */
export function namesOrNull(text) {
  const names = text.split(",").map((n) => n.trim()).filter((n) => n !== "");
  return names.length ? names : null;
}

/**
 * Parses JSON typed into a field; empty text is `undefined`. Throws FieldError on bad JSON.
 * @param {string} name
 * @param {string} text
 * @returns {unknown}
 */
export function parseJsonField(name, text) {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new FieldError({ [name]: `Is not valid JSON (${/** @type {Error} */ (error).message})` });
  }
}
