// @ts-check
/**
 * How to start a remote location's runners, filled in with its token (shown once) and this
 * dashboard's address: the start command, and a systemd unit with its environment file. The
 * networks its probes may reach (`PROBE_ALLOW_NETWORKS`) are typed here and go into both.
 */
import { useState } from "preact/hooks";
import { view } from "./view.js";
import { CopyBox, TextField } from "./settings_parts.js";

/**
 * A value as the shell reads it: as it is when it holds only characters the shell leaves alone,
 * else in single quotes.
 * @param {string} value
 */
export function shellWord(value) {
  return /^[A-Za-z0-9_./:,@%+=-]*$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * What a runner of the location needs, as `NAME=value` lines: the service's address, the token
 * and the networks its probes may reach.
 * @param {{ serviceUrl: string, token: string, networks: string }} setup
 */
export function runnerEnvironment({ serviceUrl, token, networks }) {
  return [
    `SERVICE_URL=${shellWord(serviceUrl)}`,
    `LOCATION_TOKEN=${shellWord(token)}`,
    `PROBE_ALLOW_NETWORKS=${shellWord(networks.replace(/\s+/g, ""))}`,
  ];
}

/**
 * The command that starts a runner from a checkout of the service.
 * @param {{ serviceUrl: string, token: string, networks: string }} setup
 */
export function startCommand(setup) {
  return `${runnerEnvironment(setup).join(" ")} deno task runner:remote`;
}

/**
 * A systemd unit for the location's runners, as docs/locations.md has it, named for the location.
 * @param {string} location
 */
export function systemdUnit(location) {
  return `[Unit]
Description=Probe service remote runner (location ${location})
After=network-online.target
Wants=network-online.target

[Service]
WorkingDirectory=/opt/probe-service
EnvironmentFile=/etc/probe-runner-${location}.env
ExecStart=/usr/bin/deno task runner:remote
Restart=always
RestartSec=5
KillSignal=SIGTERM
TimeoutStopSec=20
DynamicUser=yes
Environment=DENO_DIR=/var/cache/probe-runner
CacheDirectory=probe-runner

[Install]
WantedBy=multi-user.target
`;
}

/**
 * The token, with Copy, and what starts a runner with it.
 * @param {{ location: string, token: string }} props
 */
export function RunnerSetup({ location, token }) {
  const [networks, setNetworks] = useState("");
  const setup = { serviceUrl: globalThis.location.origin, token, networks };
  return view`<div class="runner-setup">
    <${CopyBox} id="location-token" label="token" text=${token} />
    <${TextField} idPrefix="runner" name="networks" label="Networks its probes may reach"
      value=${networks} onInput=${setNetworks} autocomplete="off" spellcheck=${false}
      hint=${
    "PROBE_ALLOW_NETWORKS: loopback, private and link-local ranges (comma-separated " +
    "CIDRs, such as 10.0.0.0/8) its probes may reach on the runner's network; empty: public " +
    "addresses only."
  } />
    <${CopyBox} id="runner-command" label="start command" text=${startCommand(setup)} />
    <p class="hint">Run it in a checkout of the service, on a machine with Deno 2 that can reach
      ${" "}<code>${setup.serviceUrl}</code>. Start as many runners as the location needs with the
      same token: they share its runs.</p>
    <details class="runner-unit">
      <summary>As a systemd service</summary>
      <${CopyBox} id="runner-env" label=${`/etc/probe-runner-${location}.env`}
        text=${`${runnerEnvironment(setup).join("\n")}\n`} />
      <p class="hint">Mode 0600: it holds the token.</p>
      <${CopyBox} id="runner-unit"
        label=${`/etc/systemd/system/probe-runner-${location}.service`}
        text=${systemdUnit(location)} />
      <p class="hint">Then <code>systemctl enable --now probe-runner-${location}</code>.</p>
    </details>
  </div>`;
}
