// A Deno app outside the workspace using the packed @probe/client from node_modules.
import { createProbeClient, ProbeApiError } from "@probe/client";

const [baseUrl, apiKey] = Deno.args;
const client = createProbeClient({ baseUrl, apiKey });

// @ts-expect-error probeId is required
export const wrong = () => client.probes.get({ project: "p" });

const { data } = await client.settings.getIamAlive();
let missing = "";
try {
  await client.projects.get({ project: "no-such-project" });
} catch (error) {
  if (error instanceof ProbeApiError) missing = `${error.status} ${error.code}`;
}
console.log(JSON.stringify({ channels: data.channels.length > 0, missing }));
