// Run with --allow-net only: the client needs no other permission. Prints the settings it reads.
import { createProbeClient } from "@probe/client";

const [baseUrl, apiKey] = Deno.args;
const client = createProbeClient({ baseUrl, apiKey });
const { data } = await client.settings.getIamAlive();
console.log(JSON.stringify(data));
