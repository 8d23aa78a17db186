/**
 * The typed client's notification targets of every kind the service registers: the kinds list,
 * a PagerDuty target created, read masked, changed and refused where its fields are wrong, in-process
 * against a real app on PGlite and, with TEST_DATABASE_URL, PostgreSQL.
 */
import assert from "node:assert/strict";
import { TARGET_KINDS } from "@probe/shared";
import { apiSuite, uniqueName } from "../server/testing/app.ts";
import type { TargetCreateInput } from "./mod.ts";
import { clientOf, rejects } from "./testing.ts";

const ROUTING_KEY = "R0UT1NGKEYclienttest0000000wxyz";

apiSuite("typed client: targets of every kind", (test) => {
  test("kinds: every kind with its fields, secrets marked", async (t) => {
    const client = clientOf(t);
    const kinds = await client.targets.kinds();
    assert.deepEqual(kinds.data.map((k) => k.kind), TARGET_KINDS);
    assert.equal(kinds.meta.count, TARGET_KINDS.length);
    const pagerduty = kinds.data.find((k) => k.kind === "pagerduty")!;
    assert.deepEqual(
      pagerduty.fields.map(({ name, secret, required }) => ({ name, secret, required })),
      [
        { name: "routing_key", secret: true, required: true },
        { name: "url", secret: false, required: false },
      ],
    );
    assert.equal(
      pagerduty.fields[1].default,
      "https://events.pagerduty.com/v2/enqueue",
    );
  });

  test("a pagerduty target: created, its routing key masked, changed, refused", async (t) => {
    const client = clientOf(t);
    const name = uniqueName("pager");
    const input: TargetCreateInput = { name, kind: "pagerduty", routing_key: ROUTING_KEY };
    const created = await client.targets.create(input);
    assert.equal(created.data.kind, "pagerduty");
    assert.equal(created.data.routing_key, "…wxyz", "the key's last four characters only");
    assert.equal(created.data.url, null, "the Events API's URL by default");

    const moved = await client.targets.update({ name, url: "https://pd.example.com/v2/enqueue" });
    assert.equal(moved.data.url, "https://pd.example.com/v2/enqueue");
    const read = await client.targets.get({ name });
    assert.equal(read.data.routing_key, "…wxyz");
    const listed = await client.targets.list();
    assert.ok(listed.data.some((d) => d.name === name && d.kind === "pagerduty"));
    assert.ok(!JSON.stringify([created, moved, read, listed]).includes(ROUTING_KEY));

    await rejects(
      () => client.targets.create({ name: uniqueName("pager"), kind: "pagerduty" }),
      422,
      "validation_failed",
      "routing_key",
    );
    await rejects(
      () => client.targets.update({ name, chat_id: "-1001234" }),
      422,
      "validation_failed",
      "chat_id",
    );
    await rejects(
      // @ts-expect-error: a kind the service does not have is not a TargetKind
      () => client.targets.create({ name: uniqueName("x"), kind: "pager" }),
      422,
      "validation_failed",
      "kind",
    );
    await client.targets.delete({ name });
  });
});
