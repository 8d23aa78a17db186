// @ts-check
/**
 * Escalation steps as the policy screens show and take them: `10=pager; 30=lead,ops-slack` (the
 * CLI's `--escalation` form), `none` for no steps.
 */
import { FieldError } from "./forms.js";

/** @typedef {{ after_minutes: number, targets: string[] }} Step */

/**
 * Steps in the form the field takes.
 * @param {Step[]} steps
 */
export const stepsText = (steps) =>
  steps.length === 0
    ? "none"
    : steps.map((s) => `${s.after_minutes}=${s.targets.join(",")}`).join("; ");

/**
 * Steps in words, for the facts: `after 10 min: pager; after 30 min: lead, ops-slack`.
 * @param {Step[]} steps
 */
export const stepsWords = (steps) =>
  steps.length === 0
    ? "none"
    : steps.map((s) => `after ${s.after_minutes} min: ${s.targets.join(", ")}`).join("; ");

/**
 * The steps typed into the field; FieldError (on `escalation`) when they are not in its form.
 * The service checks the bounds and the targets.
 * @param {string} text
 * @returns {Step[]}
 */
export function stepsOf(text) {
  const trimmed = text.trim();
  if (trimmed === "" || trimmed.toLowerCase() === "none") return [];
  return trimmed.split(";").map((part) => {
    const [minutes, targets, ...rest] = part.split("=");
    const after = Number(minutes.trim());
    if (targets === undefined || rest.length > 0 || !Number.isInteger(after)) {
      throw new FieldError({
        escalation: `"${part.trim()}" is not minutes=targets (steps joined by ";", or none)`,
      });
    }
    return {
      after_minutes: after,
      targets: targets.split(",").map((t) => t.trim()).filter((t) => t.length > 0),
    };
  });
}

/** The field's hint. */
export const STEPS_HINT = "Who else is told while an incident stays open and unacknowledged: " +
  "minutes=targets steps joined by ; (10=oncall-pager; 30=lead,ops-slack), counted from the " +
  "incident's start, at most 5, each later than the one before; none for no steps.";
