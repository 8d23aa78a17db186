// @ts-check
/**
 * The Settings page (`#/settings`): the I'm alive settings, the one global document of the
 * interface, read and changed through the same API the CLI uses (`GET`/`PATCH
 * /settings/iam-alive`), the API judging what is typed; and what the service says of itself:
 * its version and database (`GET /whoami`, with the key's scope) and its runners
 * (`GET /locations`).
 */
import { view } from "./view.js";
import { useAbilities } from "./scope.js";
import { get, patch } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { href } from "./routes.js";
import { ErrorNote, Loading } from "./parts.js";
import { FieldError, FormError, useForm } from "./forms.js";
import { CheckField, TextField, useFormValues } from "./settings_parts.js";
import { count, plural } from "./format.js";

/** @import { operations as Operations } from "./openapi.gen.ts" */
/**
 * @typedef {Operations["settings-getIamAlive"]["responses"][200]["content"]["application/json"]["data"]}
 *   IamAlive
 * @typedef {Operations["whoami-get"]["responses"][200]["content"]["application/json"]["data"]}
 *   Whoami
 * @typedef {Operations["locations-list"]["responses"][200]["content"]["application/json"]["data"][number]}
 *   Location
 */

/** The channels, with what each needs from the service's configuration (docs/iam_alive.md). */
const CHANNELS = /** @type {const} */ ([
  ["log", "Log", "a line on the service's standard output"],
  ["webhook", "Webhook", "needs IAM_ALIVE_WEBHOOK_URL, such as a dead man's switch's ping URL"],
  ["mail", "Mail", "needs SMTP_URL, MAIL_FROM and MAIL_TO"],
]);
const FIELDS = ["enabled", "interval_hours", "channels"];

/**
 * The settings in effect, as a list of facts.
 * @param {{ settings: IamAlive }} props
 */
function IamAliveFacts({ settings }) {
  return view`<dl class="facts" aria-label="I'm alive settings in effect">
    <div><dt>Reports</dt><dd>${settings.enabled ? "sent" : "off"}</dd></div>
    <div><dt>Every</dt><dd>${plural(settings.interval_hours, "hour")}</dd></div>
    <div><dt>Channels</dt><dd>${settings.channels.join(", ")}</dd></div>
  </dl>`;
}

/**
 * The channels as checkboxes.
 * @param {{ chosen: string[], onChange: (chosen: string[]) => void, error?: string }} props
 */
function ChannelChoice({ chosen, onChange, error }) {
  const toggle = (/** @type {string} */ name, /** @type {boolean} */ on) =>
    onChange(on ? [...chosen, name] : chosen.filter((n) => n !== name));
  return view`<fieldset name="channels"
    class=${error ? "choices channels invalid" : "choices channels"}
    aria-describedby=${error ? "iam-alive-channels-error" : "iam-alive-channels-hint"}>
    <legend>Channels</legend>
    ${
    CHANNELS.map(([name, label, hint]) =>
      view`<label class="choice" key=${name}>
        <input type="checkbox" name="channel" value=${name} checked=${chosen.includes(name)}
          aria-invalid=${error ? "true" : undefined}
          onChange=${(/** @type {Event} */ e) =>
        toggle(name, /** @type {HTMLInputElement} */ (e.currentTarget).checked)} />
        ${label} <span class="muted">(${hint})</span>
      </label>`
    )
  }
    <p class="hint" id="iam-alive-channels-hint">One or more.</p>
    ${error && view`<p class="field-error" id="iam-alive-channels-error">${error}</p>`}
  </fieldset>`;
}

/**
 * The form: every field sent as typed (`PATCH /settings/iam-alive`), the API's refusals beside
 * their fields.
 * @param {{ settings: IamAlive, onSaved: () => void }} props
 */
function IamAliveForm({ settings, onSaved }) {
  const form = useForm(FIELDS);
  const { values, set, saved, setSaved } = useFormValues({
    enabled: settings.enabled,
    interval_hours: String(settings.interval_hours),
    channels: [...settings.channels],
  });
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      const text = values.interval_hours.trim();
      const hours = Number(text);
      if (text === "" || !Number.isInteger(hours)) {
        throw new FieldError({ interval_hours: "Enter a whole number of hours" });
      }
      // In the order of the checkboxes, so the answer reads as the form does.
      const channels = CHANNELS.map(([name]) => name).filter((n) => values.channels.includes(n));
      await patch("/settings/iam-alive", {
        enabled: values.enabled,
        interval_hours: hours,
        channels,
      });
      setSaved(true);
      onSaved();
    });
  };
  return view`<form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
    aria-labelledby="iam-alive-form-title">
    <h3 id="iam-alive-form-title">Change them</h3>
    <${FormError} message=${form.formError} />
    <${CheckField} name="enabled" idPrefix="iam-alive" label="Send reports"
      checked=${values.enabled} onChange=${set("enabled")} error=${form.errors.enabled}
      hint="Turned on (or saved while on), a report goes out at once, then every interval." />
    <${TextField} idPrefix="iam-alive" name="interval_hours" label="Interval (hours)"
      type="number" inputmode="numeric" value=${values.interval_hours}
      onInput=${set("interval_hours")} error=${form.errors.interval_hours}
      hint="1 to 24 hours between reports." />
    <${ChannelChoice} chosen=${values.channels} onChange=${set("channels")}
      error=${form.errors.channels} />
    <div class="actions">
      <button type="submit" class="primary" disabled=${form.busy}>Save settings</button>
      <span role="status">${saved ? "Saved." : ""}</span>
    </div>
  </form>`;
}

/**
 * Each location's runners in a line: `local: 1 runner, 12 checks/min, 0.2 s behind`.
 * @param {{ locations: Location[] }} props
 */
function RunnerFacts({ locations }) {
  return view`<ul class="runner-facts">
    ${
    locations.map((l) =>
      view`<li key=${l.name}><strong>${l.name}</strong>${
        l.kind === "local" ? " (built in)" : ""
      }: ${plural(l.runners, "runner")}, ${plural(l.probes, "probe")}, ${
        count(l.checks_per_minute)
      } checks/min, ${l.lag_seconds.toFixed(1)} s behind its schedule${
        l.version ? `, version ${l.version}` : ""
      }</li>`
    )
  }
  </ul>`;
}

/**
 * What the service says of itself.
 * @param {{ me: Whoami, locations: Location[] }} props
 */
function ServiceFacts({ me, locations }) {
  const database = me.database === "postgresql"
    ? "PostgreSQL (DATABASE_URL)"
    : me.database === "embedded"
    ? "embedded PostgreSQL (PGlite in DATA_DIR)"
    : "not said";
  return view`<dl class="facts" aria-label="This service">
    <div><dt>Version</dt><dd>${me.version}</dd></div>
    <div><dt>Database</dt><dd>${database}</dd></div>
    <div><dt>You</dt><dd>${me.name}, ${me.role}${
    me.projects === null ? ", every project" : `, limited to ${me.projects.join(", ") || "none"}`
  }</dd></div>
    <div><dt>Your key</dt><dd>${
    me.scope === "write" ? "may read and write" : "may only read (SERVICE_API_KEYS_READONLY)"
  }</dd></div>
    <div class="wide"><dt>Runners</dt><dd><${RunnerFacts} locations=${locations} />
      <a href=${href.locations()}>All locations</a></dd></div>
  </dl>`;
}

export function SettingsPage() {
  useTitle("Settings");
  const canAdminister = useAbilities().administer;
  const iamAlive = useLoad(() => get("/settings/iam-alive"), []);
  const service = useLoad(() => Promise.all([get("/whoami"), get("/locations")]), []);
  const settings = iamAlive.data?.data;
  return view`<div>
    <div class="page-head">
      <h1 tabindex="-1">Settings</h1>
    </div>
    <section aria-labelledby="iam-alive-title">
      <h2 id="iam-alive-title">I'm alive reports</h2>
      <p class="muted">Who watches the watcher: while reports are on, the service sends one every
        interval over each chosen channel. Point the webhook at a dead man's switch to learn when
        the monitor itself stops.</p>
      <${ErrorNote} error=${iamAlive.error} />
      ${!settings && iamAlive.loading && view`<${Loading} what="Loading the settings" />`}
      ${settings && view`<${IamAliveFacts} settings=${settings} />`}
      ${
    settings && canAdminister &&
    view`<${IamAliveForm} settings=${settings} onSaved=${iamAlive.reload} />`
  }
    </section>
    <section aria-labelledby="service-title">
      <h2 id="service-title">This service</h2>
      <${ErrorNote} error=${service.error} />
      ${!service.data && service.loading && view`<${Loading} what="Loading" />`}
      ${
    service.data &&
    view`<${ServiceFacts} me=${service.data[0].data} locations=${service.data[1].data} />`
  }
    </section>
  </div>`;
}
