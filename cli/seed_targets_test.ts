/**
 * Seed files and export with the on-call kinds: a PagerDuty and a Telegram target whose secrets
 * are named by the variables holding them (`routing_key_env`, `bot_token_env`), created, then
 * unchanged, compared by what a read shows, exported and loaded back. Applied with a typed client
 * over a real app in-process, on PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import assert from "node:assert/strict";
import { clientOf } from "../client/testing.ts";
import { apiSuite, uniqueName } from "../server/testing/app.ts";
import { exportSeed, renderSeed } from "./export.ts";
import { applySeed, parseSeedFile, type Step } from "./seed.ts";
import { seedRefusal as refusal } from "./seed_testing.ts";

const ROUTING_KEY = "R0UT1NGKEYseedtest0000000000wxyz";
const BOT_TOKEN = "123456789:AAseedTestTokenForTelegram_000abcd";

const actions = (steps: Step[]) => steps.map((s) => `${s.target} ${s.action}`);

Deno.test("an on-call target's secret is never in a seed file, nor repeated", () => {
  const message = refusal({
    targets: [
      { name: "pd", kind: "pagerduty", routing_key: ROUTING_KEY },
      { name: "tg", kind: "telegram", bot_token_env: "TG_TOKEN" },
      { name: "tg2", kind: "telegram", chat_id: "-100123" },
      { name: "pd2", kind: "pagerduty", routing_key_env: "PD_KEY", chat_id: "-100123" },
      { name: "tg3", kind: "telegram", bot_token_env: "T", chat_id: "1", chat_id_env: "C" },
    ],
  });
  assert.match(
    message,
    /^ {2}targets\.0\.routing_key: must not be in the file: .* routing_key_env$/m,
  );
  assert.match(
    message,
    /^ {2}targets\.1\.chat_id: a telegram target takes exactly one of chat_id and chat_id_env$/m,
  );
  assert.match(message, /^ {2}targets\.2\.bot_token_env: is required for a telegram target$/m);
  assert.match(message, /^ {2}targets\.3\.chat_id: is not a field of a pagerduty target$/m);
  assert.match(message, /^ {2}targets\.4\.chat_id: a telegram target takes exactly one of/m);
  assert.ok(!message.includes(ROUTING_KEY), message);
});

apiSuite("seeding on-call targets", (test) => {
  test("pagerduty and telegram: created, unchanged, updated, exported and loaded back", async (t) => {
    const client = clientOf(t);
    const [pd, tg] = ["pd", "tg"].map((p) => uniqueName(p));
    const file = parseSeedFile(
      `targets:
  - { name: ${pd}, kind: pagerduty, routing_key_env: PD_KEY }
  - { name: ${tg}, kind: telegram, bot_token_env: TG_TOKEN, chat_id: "-1001234567890" }
`,
      "seed.yaml",
    );
    const env = { PD_KEY: ROUTING_KEY, TG_TOKEN: BOT_TOKEN };
    assert.deepEqual(actions(await applySeed(client, file, { env })), [
      `${pd} created`,
      `${tg} created`,
    ]);
    assert.equal((await client.targets.get({ name: pd })).data.routing_key, "…wxyz");
    const telegram = (await client.targets.get({ name: tg })).data;
    assert.equal(telegram.bot_token, "…abcd");
    assert.equal(telegram.chat_id, "-1001234567890");
    const second = await applySeed(client, file, { env });
    assert.deepEqual(actions(second), [`${pd} unchanged`, `${tg} unchanged`]);
    assert.ok(!JSON.stringify(second).includes(ROUTING_KEY));

    // A setting a read shows is compared; a secret only written when asked.
    const rotated = { PD_KEY: `${ROUTING_KEY}2`, TG_TOKEN: BOT_TOKEN };
    assert.deepEqual(actions(await applySeed(client, file, { env: rotated })), [
      `${pd} unchanged`,
      `${tg} unchanged`,
    ]);
    assert.deepEqual(
      actions(await applySeed(client, file, { env: rotated, updateSecrets: true })),
      [`${pd} updated`, `${tg} updated`],
    );
    assert.equal((await client.targets.get({ name: pd })).data.routing_key, "…xyz2");
    const moved = parseSeedFile(
      `targets:
  - { name: ${tg}, kind: telegram, bot_token_env: TG_TOKEN, chat_id: "@probe_alerts" }
`,
      "seed.yaml",
    );
    assert.deepEqual(actions(await applySeed(client, moved, { env })), [`${tg} updated`]);
    assert.equal((await client.targets.get({ name: tg })).data.chat_id, "@probe_alerts");

    // Exported: each secret a variable to fill, the rest as read; loaded back, nothing changes.
    const exported = await exportSeed(client);
    const targets = exported.seed.targets as Record<string, unknown>[];
    const stem = (name: string) => `PROBE_TARGET_${name.toUpperCase().replace(/-/g, "_")}`;
    assert.deepEqual(targets.find((x) => x.name === pd), {
      name: pd,
      kind: "pagerduty",
      routing_key_env: `${stem(pd)}_ROUTING_KEY`,
    });
    assert.deepEqual(targets.find((x) => x.name === tg), {
      name: tg,
      kind: "telegram",
      bot_token_env: `${stem(tg)}_BOT_TOKEN`,
      chat_id: "@probe_alerts",
    });
    const text = renderSeed(exported, "yaml");
    assert.ok(!text.includes(ROUTING_KEY) && !text.includes(BOT_TOKEN));
    const back = parseSeedFile(text, "export.yaml");
    const ours = back.targets.filter((x) => x.name === pd || x.name === tg);
    const steps = await applySeed(client, { targets: ours, projects: [], locations: [] }, {
      env: { [`${stem(pd)}_ROUTING_KEY`]: ROUTING_KEY, [`${stem(tg)}_BOT_TOKEN`]: BOT_TOKEN },
    });
    for (const name of [pd, tg]) {
      assert.equal(steps.find((s) => s.target === name)?.action, "unchanged");
    }
  });
});
