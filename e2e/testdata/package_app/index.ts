// A Node 20 app using the packed @probe/client: type-checked by tsc, then run by node.
import {
  createProbeClient,
  type IamAliveSettings,
  ProbeApiError,
  type ProbeStats,
  type Project,
} from "@probe/client";

const [baseUrl, apiKey] = process.argv.slice(2);
const client = createProbeClient({ baseUrl, apiKey });

const project = `node-${process.pid}`;
const created = await client.projects.create({ project, label: "From Node" });
const got: Project = (await client.projects.get({ project })).data;
const probe = await client.probes.create({ project, url: "http://127.0.0.1:9/node", latency: 50 });
const listed = await client.probes.listByProject({ project });
const stats: ProbeStats = (await client.results.stats({
  project,
  probeId: probe.data.probe_id,
  window: "7d",
})).data;
const board = await client.results.status({ project });
const settings: IamAliveSettings = (await client.settings.getIamAlive()).data;

let conflict = "";
try {
  await client.projects.create({ project });
} catch (error) {
  if (error instanceof ProbeApiError) conflict = `${error.status} ${error.code}`;
}

// The types are the service's: a wrong field type does not compile.
export const wrong = () =>
  // @ts-expect-error latency is a number of milliseconds
  client.probes.create({ project, url: "http://127.0.0.1:9/", latency: "slow" });
export const wrongWindow = () =>
  // @ts-expect-error the window is 1h, 24h, 7d, 30d or 90d
  client.results.stats({ project, probeId: probe.data.probe_id, window: "1w" });

console.log(JSON.stringify({
  created: created.data.project,
  label: got.label,
  probeCreated: probe.meta.created,
  probeCount: listed.meta.count,
  statsWindow: stats.window,
  statsRuns: stats.runs,
  boardCount: board.meta.count,
  intervalIsNumber: typeof settings.interval_hours === "number",
  conflict,
}));
