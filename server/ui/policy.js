// @ts-check
/**
 * The alert policy (`/settings/alerts`): when a state change is notified and to which targets;
 * and a project's overrides of it (`/projects/{project}/alerts`), each field its own value or the
 * global one. A read-only key sees the values without the forms.
 */
import { view } from "./view.js";
import { useAbilities, useCanWrite } from "./scope.js";
import { get, patch, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { href } from "./routes.js";
import { ErrorNote, Loading } from "./parts.js";
import { FieldError, FormError, useForm } from "./forms.js";
import { CheckField, ProjectSettingsHead, TextField, useFormValues } from "./settings_parts.js";
import { STEPS_HINT, stepsOf, stepsText, stepsWords } from "./escalation.js";

/** @import { Answer, Body } from "./api_types.d.ts" */
/**
 * @typedef {NonNullable<Answer<"get", "/settings/alerts">>["data"]} Policy
 * @typedef {NonNullable<Answer<"get", "/projects/{project}/alerts">>["data"]} ProjectAlerts
 * @typedef {ProjectAlerts["overrides"]} Overrides
 * @typedef {Body<"patch", "/projects/{project}/alerts">} OverridesChange
 * @typedef {"failure_threshold" | "success_threshold" | "reminder_minutes" | "flap_changes"
 *   | "flap_minutes"} NumberField
 * @typedef {"enabled" | "notify_degraded" | "notify_recovered"} SwitchField
 */

/** @type {[NumberField, string, string][]} */
const NUMBERS = [
  [
    "failure_threshold",
    "Failures before down",
    "Failing runs in a row before a probe is down " +
    "and an incident opens: 1 to 10.",
  ],
  [
    "success_threshold",
    "Successes before recovered",
    "Passing runs in a row before a down " +
    "probe recovers: 1 to 10.",
  ],
  [
    "reminder_minutes",
    "Reminder every (minutes)",
    "While an incident is open and not " +
    "acknowledged: 0 for none, or 5 to 10080 (a week).",
  ],
  [
    "flap_changes",
    "Flapping past (changes)",
    "More state changes than this within the flapping window: one flapping alert, then quiet " +
    "until stable. 0 for off, or 2 to 100.",
  ],
  [
    "flap_minutes",
    "Flapping window (minutes)",
    "Where changes are counted, and how long a flapping probe must keep one state: 1 to 1440.",
  ],
];

/** @type {[SwitchField, string, string][]} */
const SWITCHES = [
  [
    "enabled",
    "Send notifications",
    "Off: nobody is notified; states and incidents are still kept.",
  ],
  ["notify_recovered", "Notify when a probe recovers", "When it leaves down."],
  [
    "notify_degraded",
    "Notify when a probe is degraded",
    "When it goes from up to degraded " +
    "(it passes, but slower than its expected latency).",
  ],
];

const FIELDS = [
  "enabled",
  "targets",
  "failure_threshold",
  "success_threshold",
  "reminder_minutes",
  "notify_degraded",
  "notify_recovered",
  "location_quorum",
  "escalation",
  "flap_changes",
  "flap_minutes",
];

/** The quorum field's label and hint. */
const QUORUM = [
  "Locations down for down",
  "How many of a probe's locations must be down for the probe to be down: " +
  "a number from 1 to 16, or majority (more than half: 1 of 1, 2 of 2, 2 of 3).",
];

/** Each field as the lists name it. */
const FIELD_NAMES = {
  enabled: "whether notifications are sent",
  targets: "the targets",
  failure_threshold: "failures before down",
  success_threshold: "successes before recovered",
  reminder_minutes: "the reminder",
  notify_degraded: "notifying degradations",
  notify_recovered: "notifying recoveries",
  location_quorum: "the location quorum",
  escalation: "the escalation",
  flap_changes: "flapping past",
  flap_minutes: "the flapping window",
};

const onOff = (/** @type {boolean} */ value) => (value ? "on" : "off");

/**
 * A number typed into a field; FieldError when it is not one.
 * @param {NumberField} name
 * @param {string} text
 */
function numberOf(name, text) {
  const value = Number(text.trim());
  if (text.trim() === "" || !Number.isInteger(value)) {
    throw new FieldError({ [name]: "Enter a whole number" });
  }
  return value;
}

/**
 * The location quorum typed into its field: `majority` or a whole number.
 * @param {string} text
 * @returns {number | "majority"}
 */
function quorumOf(text) {
  if (text.trim().toLowerCase() === "majority") return "majority";
  const value = Number(text.trim());
  if (text.trim() === "" || !Number.isInteger(value)) {
    throw new FieldError({ location_quorum: "Enter a whole number or majority" });
  }
  return value;
}

/**
 * A policy, as a list of facts.
 * @param {{ policy: Policy, label: string }} props
 */
function PolicyFacts({ policy, label }) {
  return view`<dl class="facts" aria-label=${label}>
    <div><dt>Notifications</dt><dd>${policy.enabled ? "sent" : "off"}</dd></div>
    <div><dt>Targets</dt><dd>${policy.targets.join(", ")}</dd></div>
    ${
    NUMBERS.map(([name, text]) =>
      view`<div key=${name}><dt>${text}</dt><dd>${policy[name]}</dd></div>`
    )
  }
    <div><dt>On recovery</dt><dd>${policy.notify_recovered ? "notified" : "not notified"}</dd></div>
    <div><dt>On degraded</dt><dd>${policy.notify_degraded ? "notified" : "not notified"}</dd></div>
    <div><dt>${QUORUM[0]}</dt><dd>${policy.location_quorum}</dd></div>
    <div><dt>Escalation</dt><dd>${stepsWords(policy.escalation)}</dd></div>
  </dl>`;
}

/**
 * Checkboxes for the targets a policy names, from those that exist (and any it names that does
 * not, so that it can be taken out).
 * @param {{
 *   legend: string,
 *   names: string[],
 *   chosen: string[],
 *   onChange: (chosen: string[]) => void,
 *   error?: string,
 *   disabled?: boolean,
 *   idPrefix: string,
 * }} props
 */
function TargetChoice({ legend, names, chosen, onChange, error, disabled, idPrefix }) {
  const all = [...names, ...chosen.filter((n) => !names.includes(n))];
  const toggle = (/** @type {string} */ name, /** @type {boolean} */ on) =>
    onChange(on ? [...chosen, name] : chosen.filter((n) => n !== name));
  const errorId = `${idPrefix}-targets-error`;
  return view`<fieldset class=${error ? "choices invalid" : "choices"} disabled=${disabled}
    aria-describedby=${error ? errorId : `${idPrefix}-targets-hint`}>
    <legend>${legend}</legend>
    <div class="targets-choice">
      ${
    all.map((name) =>
      view`<label class="choice" key=${name}>
          <input type="checkbox" name="targets" value=${name} checked=${chosen.includes(name)}
            onChange=${(/** @type {Event} */ e) =>
        toggle(name, /** @type {HTMLInputElement} */ (e.currentTarget).checked)} />
          ${name}
        </label>`
    )
  }
    </div>
    <p class="hint" id=${`${idPrefix}-targets-hint`}>
      1 to 20 targets. Targets are made on the <a href=${href.targets()}>targets page</a>.
    </p>
    ${error && view`<p class="field-error" id=${errorId}>${error}</p>`}
  </fieldset>`;
}

/**
 * The global policy's form.
 * @param {{ policy: Policy, targets: string[], onSaved: () => void }} props
 */
function PolicyForm({ policy, targets, onSaved }) {
  const form = useForm(FIELDS);
  const { values, set, saved, setSaved } = useFormValues({
    ...policy,
    failure_threshold: String(policy.failure_threshold),
    success_threshold: String(policy.success_threshold),
    reminder_minutes: String(policy.reminder_minutes),
    flap_changes: String(policy.flap_changes),
    flap_minutes: String(policy.flap_minutes),
    location_quorum: String(policy.location_quorum),
    escalation: stepsText(policy.escalation),
  });
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      /** @type {Policy} */
      const body = {
        enabled: values.enabled,
        targets: values.targets,
        failure_threshold: numberOf("failure_threshold", values.failure_threshold),
        success_threshold: numberOf("success_threshold", values.success_threshold),
        reminder_minutes: numberOf("reminder_minutes", values.reminder_minutes),
        notify_degraded: values.notify_degraded,
        notify_recovered: values.notify_recovered,
        location_quorum: quorumOf(values.location_quorum),
        escalation: stepsOf(values.escalation),
        flap_changes: numberOf("flap_changes", values.flap_changes),
        flap_minutes: numberOf("flap_minutes", values.flap_minutes),
      };
      await patch("/settings/alerts", body);
      setSaved(true);
      onSaved();
    });
  };
  return view`<form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
    aria-labelledby="policy-form-title">
    <h2 id="policy-form-title">Change the policy</h2>
    <${FormError} message=${form.formError} />
    <${CheckField} name="enabled" label=${SWITCHES[0][1]} checked=${values.enabled}
      onChange=${set("enabled")} hint=${SWITCHES[0][2]} error=${form.errors.enabled} />
    <${TargetChoice} legend="Targets" names=${targets} chosen=${values.targets}
      onChange=${set("targets")} error=${form.errors.targets} idPrefix="policy" />
    <div class="settings-grid">
      ${
    NUMBERS.map(([name, label, hint]) =>
      view`<${TextField} key=${name} idPrefix="policy" name=${name} label=${label}
          type="number" inputmode="numeric" value=${values[name]} onInput=${set(name)}
          error=${form.errors[name]} hint=${hint} />`
    )
  }
      <${TextField} idPrefix="policy" name="location_quorum" label=${QUORUM[0]}
        value=${values.location_quorum} onInput=${set("location_quorum")}
        error=${form.errors.location_quorum} hint=${QUORUM[1]} />
    </div>
    <${TextField} idPrefix="policy" name="escalation" label="Escalation steps"
      value=${values.escalation} onInput=${set("escalation")} error=${form.errors.escalation}
      hint=${STEPS_HINT} />
    ${
    SWITCHES.slice(1).map(([name, label, hint]) =>
      view`<${CheckField} key=${name} name=${name} label=${label} checked=${values[name]}
          onChange=${set(name)} hint=${hint} error=${form.errors[name]} />`
    )
  }
    <div class="actions">
      <button type="submit" class="primary" disabled=${form.busy}>Save policy</button>
      <span role="status">${saved ? "Saved." : ""}</span>
    </div>
  </form>`;
}

/** @returns {Promise<string[]>} */
async function targetNames() {
  const answer = await get("/notification-targets");
  return answer.data.map((/** @type {{ name: string }} */ t) => t.name);
}

export function AlertPolicyPage() {
  useTitle("Alert policy");
  const canAdminister = useAbilities().administer;
  const { data, error, loading, reload } = useLoad(
    () =>
      Promise.all([
        get("/settings/alerts"),
        targetNames(),
      ]),
    [],
  );
  const policy = data?.[0].data;
  return view`<div>
    <div class="page-head">
      <h1 tabindex="-1">Alert policy</h1>
    </div>
    <p class="muted">When a probe's change of state is notified, and to which${" "}
      <a href=${href.targets()}>notification targets</a>. Each project can override any of it
      (a project's page, Alerts).</p>
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the policy" />`}
    ${
    policy && view`<section aria-labelledby="policy-now-title">
      <h2 id="policy-now-title">In effect</h2>
      <${PolicyFacts} policy=${policy} label="The alert policy in effect" />
    </section>`
  }
    ${
    policy && canAdminister &&
    view`<${PolicyForm} policy=${policy} targets=${data?.[1] ?? []}
      onSaved=${reload} />`
  }
  </div>`;
}

/**
 * A project's overrides: each field its own value, or empty (or "global") to follow the global
 * policy.
 * @param {{ project: string, alerts: ProjectAlerts, global: Policy, targets: string[],
 *   onSaved: () => void }} props
 */
function OverridesForm({ project, alerts, global, targets, onSaved }) {
  const form = useForm(FIELDS);
  const own = alerts.overrides;
  const { values, set, saved, setSaved } = useFormValues({
    targets: own.targets,
    failure_threshold: own.failure_threshold === null ? "" : String(own.failure_threshold),
    success_threshold: own.success_threshold === null ? "" : String(own.success_threshold),
    reminder_minutes: own.reminder_minutes === null ? "" : String(own.reminder_minutes),
    location_quorum: own.location_quorum === null ? "" : String(own.location_quorum),
    escalation: own.escalation === null ? "" : stepsText(own.escalation),
    flap_changes: own.flap_changes === null ? "" : String(own.flap_changes),
    flap_minutes: own.flap_minutes === null ? "" : String(own.flap_minutes),
    enabled: own.enabled === null ? "global" : onOff(own.enabled),
    notify_degraded: own.notify_degraded === null ? "global" : onOff(own.notify_degraded),
    notify_recovered: own.notify_recovered === null ? "global" : onOff(own.notify_recovered),
  });
  const switchOf = (/** @type {string} */ value) => (value === "global" ? null : value === "on");
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      /** @type {OverridesChange} */
      const body = {
        enabled: switchOf(values.enabled),
        targets: values.targets,
        failure_threshold: values.failure_threshold.trim() === ""
          ? null
          : numberOf("failure_threshold", values.failure_threshold),
        success_threshold: values.success_threshold.trim() === ""
          ? null
          : numberOf("success_threshold", values.success_threshold),
        reminder_minutes: values.reminder_minutes.trim() === ""
          ? null
          : numberOf("reminder_minutes", values.reminder_minutes),
        notify_degraded: switchOf(values.notify_degraded),
        notify_recovered: switchOf(values.notify_recovered),
        location_quorum: values.location_quorum.trim() === ""
          ? null
          : quorumOf(values.location_quorum),
        escalation: values.escalation.trim() === "" ? null : stepsOf(values.escalation),
        flap_changes: values.flap_changes.trim() === ""
          ? null
          : numberOf("flap_changes", values.flap_changes),
        flap_minutes: values.flap_minutes.trim() === ""
          ? null
          : numberOf("flap_minutes", values.flap_minutes),
      };
      await patch(`/projects/${seg(project)}/alerts`, body);
      setSaved(true);
      onSaved();
    });
  };
  return view`<form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
    aria-labelledby="overrides-title">
    <h2 id="overrides-title">Overrides</h2>
    <p class="muted">Empty fields and "as the global policy" follow the${" "}
      <a href=${href.alertPolicy()}>global policy</a>, also when it changes later.</p>
    <${FormError} message=${form.formError} />
    ${
    SWITCHES.map(([name, label, hint]) =>
      view`<div class=${form.errors[name] ? "field invalid" : "field"} key=${name}>
        <label for=${`overrides-${name}`}>${label}</label>
        <select id=${`overrides-${name}`} name=${name} value=${values[name]}
          aria-describedby=${`overrides-${name}-hint`}
          onChange=${(/** @type {Event} */ e) =>
        set(name)(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
          <option value="global">As the global policy (${onOff(global[name])})</option>
          <option value="on">On</option>
          <option value="off">Off</option>
        </select>
        <p class="hint" id=${`overrides-${name}-hint`}>${hint}</p>
        ${form.errors[name] && view`<p class="field-error">${form.errors[name]}</p>`}
      </div>`
    )
  }
    <${CheckField} name="own-targets" idPrefix="overrides" label="Targets of its own"
      checked=${values.targets !== null}
      onChange=${(/** @type {boolean} */ on) => set("targets")(on ? [...global.targets] : null)}
      hint=${`Off: the global policy's targets (${global.targets.join(", ")}).`} />
    ${
    values.targets !== null && view`<${TargetChoice} legend="This project's targets"
      names=${targets} chosen=${values.targets} onChange=${set("targets")}
      error=${form.errors.targets} idPrefix="overrides" />`
  }
    <div class="settings-grid">
      ${
    NUMBERS.map(([name, label, hint]) =>
      view`<${TextField} key=${name} idPrefix="overrides" name=${name} label=${label}
          type="number" inputmode="numeric" value=${values[name]} onInput=${set(name)}
          error=${form.errors[name]}
          hint=${`${hint} Empty: the global ${global[name]}.`} />`
    )
  }
      <${TextField} idPrefix="overrides" name="location_quorum" label=${QUORUM[0]}
        value=${values.location_quorum} onInput=${set("location_quorum")}
        error=${form.errors.location_quorum}
        hint=${`${QUORUM[1]} Empty: the global ${global.location_quorum}.`} />
    </div>
    <${TextField} idPrefix="overrides" name="escalation" label="Escalation steps"
      value=${values.escalation} onInput=${set("escalation")} error=${form.errors.escalation}
      hint=${`${STEPS_HINT} Empty: the global ${stepsText(global.escalation)}.`} />
    <div class="actions">
      <button type="submit" class="primary" disabled=${form.busy}>Save overrides</button>
      <span role="status">${saved ? "Saved." : ""}</span>
    </div>
  </form>`;
}

/** @param {{ project: string }} props */
export function ProjectAlertsPage({ project }) {
  useTitle(`Alerts of ${project}`);
  const canWrite = useCanWrite();
  const { data, error, loading, reload } = useLoad(
    () =>
      Promise.all([
        get(`/projects/${seg(project)}/alerts`),
        get("/settings/alerts"),
        targetNames(),
      ]),
    [project],
  );
  const alerts = data?.[0].data;
  const global = data?.[1].data;
  const overridden = alerts
    ? Object.entries(alerts.overrides).filter(([, v]) => v !== null)
      .map(([k]) => FIELD_NAMES[/** @type {keyof typeof FIELD_NAMES} */ (k)])
    : [];
  return view`<div>
    <${ProjectSettingsHead} project=${project} title="Alerts" current="projectAlerts" />
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the alert settings" />`}
    ${
    alerts && global && view`<section aria-labelledby="effective-title">
      <h2 id="effective-title">In effect for ${project}</h2>
      <p class="muted">${
      overridden.length
        ? `Its own: ${overridden.join(", ")}. The rest as the global policy.`
        : "All as the global policy."
    }</p>
      <${PolicyFacts} policy=${alerts.effective} label=${`The alert policy in effect for ${project}`} />
    </section>`
  }
    ${
    alerts && global && canWrite && view`<${OverridesForm}
      project=${project} alerts=${alerts} global=${global} targets=${data?.[2] ?? []}
      onSaved=${reload} />`
  }
  </div>`;
}
