import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { notificationTarget } from "@probe/shared";
import type { Db } from "../storage/database.ts";
import { json } from "../storage/json.ts";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";
import { PROVIDERS } from "../alerting/notify/providers/mod.ts";
import { generateWebhookSecret, maskChatUrl } from "./targets.ts";
import { targetForDelivery } from "../alerting/notify/stored_target.ts";

const PATH = "/api/v1/notification-targets";
const SLACK_URL = "https://hooks.slack.com/services/T000/B000/XXXXsecretXXXX";
const DISCORD_URL = "https://discord.com/api/webhooks/123456/tok-en_SECRET-discord";
const KEY = `whsec_${Buffer.from("k".repeat(32)).toString("base64")}`;

/** The details of a 422, as `path: message` lines. */
function detailsOf(res: { status: number; body: { error: { details?: unknown[] } } }) {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  return (res.body.error.details as { path: string; message: string }[] ?? [])
    .map((d) => `${d.path}: ${d.message}`);
}

async function created(api: TestClient, body: Record<string, unknown>) {
  const res = await api.post(PATH, body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

/** Names the target in the alert policy, or in a new project's overrides, as rows. */
async function nameInPolicy(db: Db, targets: string[]) {
  await db.updateTable("alert_settings").set({ targets: json(targets) }).where("id", "=", 1)
    .execute();
}

apiSuite("notification targets", (test) => {
  test("a webhook without a secret gets one, answered in full once and masked after", async ({ api }) => {
    const name = uniqueName("hook");
    const data = await created(api, { name, kind: "webhook", url: "https://example.com/hook" });
    assert.equal(notificationTarget.safeParse(data).success, true);
    assert.equal(data.kind, "webhook");
    assert.equal(data.url, "https://example.com/hook");
    assert.match(data.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, "32 random bytes");
    assert.equal(Buffer.from(data.secret.slice(6), "base64").length, 32);
    const got = await api.get(`${PATH}/${name}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.data, { ...data, secret: "whsec_…" });
    assert.ok(!got.text.includes(data.secret.slice(6)));
    const listed = await api.get(PATH);
    assert.ok(!listed.text.includes(data.secret.slice(6)));
  });

  test("a webhook with its own secret is answered masked, and signs with it", async ({ app, api }) => {
    const name = uniqueName("hook");
    const data = await created(api, {
      name,
      kind: "webhook",
      url: "https://example.com/h",
      secret: KEY,
    });
    assert.equal(data.secret, "whsec_…");
    const stored = await targetForDelivery({ db: app.database.db, name });
    assert.deepEqual(stored, { name, kind: "webhook", url: "https://example.com/h", secret: KEY });
  });

  test("Slack and Discord URLs are stored whole and shown as scheme and host only", async ({ app, api }) => {
    for (
      const [kind, url, masked] of [
        ["slack", SLACK_URL, "https://hooks.slack.com/…"],
        ["discord", DISCORD_URL, "https://discord.com/…"],
      ]
    ) {
      const name = uniqueName(kind);
      const data = await created(api, { name, kind, url });
      assert.equal(data.url, masked);
      assert.equal(data.secret, null);
      for (const res of [await api.get(`${PATH}/${name}`), await api.get(PATH)]) {
        assert.ok(!res.text.includes(new URL(url).pathname), `${kind} path shown`);
      }
      assert.deepEqual(await targetForDelivery({ db: app.database.db, name }), { name, kind, url });
    }
    assert.equal(
      maskChatUrl("https://chat.example:8443/hooks/x?y=1"),
      "https://chat.example:8443/…",
    );
  });

  test("a mail target names its recipients", async ({ api }) => {
    const name = uniqueName("mail");
    const data = await created(api, {
      name,
      kind: "mail",
      recipients: ["ops@example.com", "oncall@example.com"],
    });
    assert.deepEqual(
      { ...data, created_at: 0, updated_at: 0 },
      {
        name,
        kind: "mail",
        url: null,
        recipients: ["ops@example.com", "oncall@example.com"],
        secret: null,
        created_at: 0,
        updated_at: 0,
      },
    );
  });

  test("a name that exists is a 409 and changes nothing", async ({ api }) => {
    const name = uniqueName("dup");
    await created(api, { name, kind: "mail", recipients: ["a@example.com"] });
    const res = await api.post(PATH, { name, kind: "slack", url: SLACK_URL });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.message, "Notification target already exists");
    assert.equal((await api.get(`${PATH}/${name}`)).body.data.kind, "mail");
  });

  test("reserved and malformed names are 422 naming the field", async ({ api }) => {
    for (const name of ["log", "mail", "webhook", "LOG", "Webhook"]) {
      assert.deepEqual(detailsOf(await api.post(PATH, { name, kind: "slack", url: SLACK_URL })), [
        `name: "log", "mail" and "webhook" are reserved`,
      ]);
    }
    for (const name of ["", "-x", "a b", "x".repeat(65)]) {
      const lines = detailsOf(await api.post(PATH, { name, kind: "slack", url: SLACK_URL }));
      assert.ok(lines.length > 0 && lines.every((l) => l.startsWith("name: ")), lines.join());
    }
  });

  test("each kind's fields are checked, and every problem names its field", async ({ api }) => {
    const name = uniqueName("bad");
    const cases: [Record<string, unknown>, string[]][] = [
      [{ name, kind: "webhook" }, ["url: is required for a webhook target"]],
      [{ name, kind: "slack", url: SLACK_URL, secret: KEY }, [
        "secret: is not a field of a slack target",
      ]],
      [{ name, kind: "mail", url: SLACK_URL }, [
        "url: is not a field of a mail target",
        "recipients: is required for a mail target",
      ]],
      [{ name, kind: "discord", recipients: ["a@example.com"] }, [
        "url: is required for a discord target",
        "recipients: is not a field of a discord target",
      ]],
      [{ name, kind: "sms", url: SLACK_URL }, [
        `kind: Invalid option: expected one of ${PROVIDERS.map((p) => `"${p.kind}"`).join("|")}`,
      ]],
      [{ name, kind: "webhook", url: "https://u:p@example.com/h" }, [
        "url: must not hold a user name or password (the signature authenticates the service)",
      ]],
      [{ name, kind: "webhook", url: "ftp://example.com/h" }, [
        "url: must be an absolute http or https URL of at most 2048 characters",
      ]],
      [{ name, kind: "slack", url: `https://example.com/${"a".repeat(2048)}` }, [
        "url: Too big: expected string to have <=2048 characters",
      ]],
      [{ name, kind: "mail", recipients: [] }, [
        "recipients: Too small: expected array to have >=1 items",
      ]],
      [{ name, kind: "mail", recipients: ["not-an-address"] }, [
        "recipients.0: Invalid email address",
      ]],
      [{ name, kind: "mail", recipients: ["a@example.com", "A@example.com"] }, [
        "recipients: must not repeat an address",
      ]],
      [
        { name, kind: "mail", recipients: Array.from({ length: 21 }, (_, i) => `a${i}@x.example`) },
        [
          "recipients: Too big: expected array to have <=20 items",
        ],
      ],
      [{ name, kind: "slack", url: SLACK_URL, extra: 1 }, ["extra: is not a known field"]],
    ];
    for (const [body, expected] of cases) {
      assert.deepEqual(detailsOf(await api.post(PATH, body)), expected, JSON.stringify(body));
    }
    assert.equal((await api.get(`${PATH}/${name}`)).status, 404, "nothing was created");
  });

  test("a webhook secret must be whsec_ and the base64 of 24 to 64 bytes, and is never echoed", async ({ api }) => {
    const name = uniqueName("key");
    const b64 = (n: number) => Buffer.from("s".repeat(n)).toString("base64");
    const message = 'secret: must be "whsec_" followed by the base64 of 24 to 64 bytes';
    for (
      const secret of [b64(32), `whsec_${b64(23)}`, `whsec_${b64(65)}`, "whsec_!!!!", "whsec_"]
    ) {
      const res = await api.post(PATH, {
        name,
        kind: "webhook",
        url: "https://e.example/",
        secret,
      });
      assert.deepEqual(detailsOf(res), [message]);
      if (secret.length > 8) assert.ok(!res.text.includes(secret.slice(6)), "the value is echoed");
    }
    for (const secret of [`whsec_${b64(24)}`, `whsec_${b64(64)}`]) {
      assert.equal(
        (await api.post(PATH, {
          name: uniqueName("key"),
          kind: "webhook",
          url: "https://e.example/",
          secret,
        }))
          .status,
        201,
      );
    }
    assert.match(generateWebhookSecret(), /^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  test("the list holds the built-in log first, then the stored targets by name", async ({ api }) => {
    const names = [uniqueName("zz"), uniqueName("AA"), uniqueName("mm")];
    for (const name of names) {
      await created(api, { name, kind: "mail", recipients: ["a@example.com"] });
    }
    const res = await api.get(PATH);
    assert.equal(res.status, 200);
    const listed: string[] = res.body.data.map((t: { name: string }) => t.name);
    assert.deepEqual(res.body.data[0], {
      name: "log",
      kind: "log",
      url: null,
      secret: null,
      created_at: null,
      updated_at: null,
    });
    assert.equal(res.body.meta.count, listed.length);
    const ours = listed.filter((n) => names.includes(n));
    assert.deepEqual(ours, [...names].sort());
    assert.deepEqual(listed.slice(1), [...listed.slice(1)].sort());
    assert.deepEqual((await api.get(`${PATH}/log`)).body.data, res.body.data[0]);
  });

  test("an unknown target is a 404 on get, patch, delete and test", async ({ api }) => {
    const path = `${PATH}/${uniqueName("none")}`;
    for (
      const res of [
        await api.get(path),
        await api.patch(path, { url: SLACK_URL }),
        await api.delete(path),
        await api.post(`${path}/test`),
      ]
    ) {
      assert.equal(res.status, 404);
      assert.deepEqual(res.body.error, {
        code: "not_found",
        message: "Notification target not found",
      });
    }
  });

  test("a PATCH changes what the kind has; the kind never changes", async ({ app, api }) => {
    const hook = uniqueName("hook");
    const first = await created(api, { name: hook, kind: "webhook", url: "https://a.example/1" });
    let res = await api.patch(`${PATH}/${hook}`, { url: "https://b.example/2", secret: KEY });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.url, "https://b.example/2");
    assert.equal(res.body.data.secret, "whsec_…");
    assert.equal(res.body.data.created_at, first.created_at);
    assert.deepEqual(await targetForDelivery({ db: app.database.db, name: hook }), {
      name: hook,
      kind: "webhook",
      url: "https://b.example/2",
      secret: KEY,
    });

    const chat = uniqueName("slack");
    await created(api, { name: chat, kind: "slack", url: SLACK_URL });
    const next = "https://hooks.slack.com/services/T1/B1/other-secret";
    res = await api.patch(`${PATH}/${chat}`, { url: next });
    assert.equal(res.body.data.url, "https://hooks.slack.com/…");
    assert.ok(!res.text.includes("other-secret"));
    assert.deepEqual(await targetForDelivery({ db: app.database.db, name: chat }), {
      name: chat,
      kind: "slack",
      url: next,
    });

    const mail = uniqueName("mail");
    await created(api, { name: mail, kind: "mail", recipients: ["a@example.com"] });
    res = await api.patch(`${PATH}/${mail}`, { recipients: ["b@example.com", "c@example.com"] });
    assert.deepEqual(res.body.data.recipients, ["b@example.com", "c@example.com"]);

    const refused: [string, Record<string, unknown>, string[]][] = [
      [hook, { kind: "slack" }, ["kind: cannot be changed: delete the target and create it again"]],
      [hook, { kind: "webhook", url: "https://c.example/" }, [
        "kind: cannot be changed: delete the target and create it again",
      ]],
      [hook, { recipients: ["a@example.com"] }, ["recipients: is not a field of a webhook target"]],
      [hook, { url: "https://u:p@c.example/" }, [
        "url: must not hold a user name or password (the signature authenticates the service)",
      ]],
      [chat, { secret: KEY }, ["secret: is not a field of a slack target"]],
      [mail, { url: SLACK_URL }, ["url: is not a field of a mail target"]],
      [mail, { name: "other" }, ["name: is given by the path and must not be sent in the body"]],
      [hook, { secret: "whsec_short" }, [
        'secret: must be "whsec_" followed by the base64 of 24 to 64 bytes',
      ]],
    ];
    for (const [name, body, expected] of refused) {
      assert.deepEqual(
        detailsOf(await api.patch(`${PATH}/${name}`, body)),
        expected,
        JSON.stringify(body),
      );
    }
    const empty = await api.patch(`${PATH}/${hook}`, {});
    assert.equal(empty.status, 422);
    assert.equal(empty.body.error.message, "No fields were provided");
    assert.equal((await api.get(`${PATH}/${hook}`)).body.data.url, "https://b.example/2");
  });

  test("the built-in log target cannot be changed or deleted", async ({ api }) => {
    for (
      const res of [
        await api.patch(`${PATH}/log`, { url: SLACK_URL }),
        await api.delete(`${PATH}/log`),
      ]
    ) {
      assert.equal(res.status, 409);
      assert.equal(res.body.error.message, "The built-in log target cannot be changed or deleted");
    }
  });

  test("deleting answers 204; a target the alert policy or a project names is a 409", async ({ app, api }) => {
    const db = app.database.db;
    const name = uniqueName("used");
    await created(api, { name, kind: "mail", recipients: ["a@example.com"] });
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);

    await nameInPolicy(db, ["log", name]);
    await db.insertInto("project_alerts").values({ project, targets: json([name]) }).execute();
    let res = await api.delete(`${PATH}/${name}`);
    assert.equal(res.status, 409);
    assert.equal(res.body.error.message, "Notification target is in use");
    assert.deepEqual(res.body.error.details, [
      { path: "name", message: "named by the alert policy's targets" },
      { path: "name", message: `named by the alert targets of project "${project}"` },
    ]);

    await nameInPolicy(db, ["log"]);
    res = await api.delete(`${PATH}/${name}`);
    assert.equal(res.status, 409);
    assert.equal(res.body.error.details.length, 1);

    await db.updateTable("project_alerts").set({ targets: null }).where(
      "project",
      "=",
      project,
    )
      .execute();
    res = await api.delete(`${PATH}/${name}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, "");
    assert.equal((await api.get(`${PATH}/${name}`)).status, 404);
    assert.equal((await api.delete(`${PATH}/${name}`)).status, 404);
  });

  test("every endpoint wants the API key", async ({ api }) => {
    const name = uniqueName("key");
    await created(api, { name, kind: "mail", recipients: ["a@example.com"] });
    const calls = [
      api.get(PATH, { key: null }),
      api.get(`${PATH}/${name}`, { key: null }),
      api.post(PATH, { name: uniqueName(), kind: "mail", recipients: ["a@example.com"] }, {
        key: "wrong-key-123",
      }),
      api.patch(`${PATH}/${name}`, { recipients: ["b@example.com"] }, { key: null }),
      api.delete(`${PATH}/${name}`, { key: null }),
      api.post(`${PATH}/log/test`, undefined, { key: null }),
    ];
    for (const res of await Promise.all(calls)) assert.equal(res.status, 401);
    assert.deepEqual((await api.get(`${PATH}/${name}`)).body.data.recipients, ["a@example.com"]);
  });

  test("every answer is also the tRPC answer", async ({ api }) => {
    const name = uniqueName("trpc");
    const res = await api.post("/trpc/targets.create", { name, kind: "discord", url: DISCORD_URL });
    assert.equal(res.status, 200);
    assert.equal(res.body.result.data.data.url, "https://discord.com/…");
    const got = await api.get(
      `/trpc/targets.get?input=${encodeURIComponent(JSON.stringify({ name }))}`,
    );
    assert.equal(got.body.result.data.data.name, name);
    assert.ok(!got.text.includes("SECRET-discord"));
  });
});
