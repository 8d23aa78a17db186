import assert from "node:assert/strict";
import { apiSuite } from "../testing/app.ts";

const PATH = "/api/v1/settings/iam-alive";

// The settings are one global document: these cases run in order on one database.
apiSuite("I'm alive settings", (test) => {
  test("start disabled, every 24 hours, on the log channel", async ({ api }) => {
    const res = await api.get(PATH);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { enabled: false, interval_hours: 24, channels: ["log"] } });
  });

  test("sending interval_hours without enabled turns reporting on", async ({ api }) => {
    const res = await api.patch(PATH, { interval_hours: 6 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { enabled: true, interval_hours: 6, channels: ["log"] } });
    assert.deepEqual((await api.get(PATH)).body, res.body);
  });

  test("enabled can be switched off alone, and stays off when sent with other fields", async ({ api }) => {
    let res = await api.patch(PATH, { enabled: false });
    assert.deepEqual(res.body.data, { enabled: false, interval_hours: 6, channels: ["log"] });
    res = await api.patch(PATH, { enabled: false, channels: ["mail", "webhook"] });
    assert.deepEqual(res.body.data, {
      enabled: false,
      interval_hours: 6,
      channels: ["mail", "webhook"],
    });
  });

  test("sending channels without enabled turns reporting on", async ({ api }) => {
    const res = await api.patch(PATH, { channels: ["webhook", "log", "mail"] });
    assert.deepEqual(res.body.data, {
      enabled: true,
      interval_hours: 6,
      channels: ["webhook", "log", "mail"],
    });
  });

  test("invalid patches answer 422 and change nothing, not even their valid fields", async ({ api }) => {
    await api.patch(PATH, { enabled: false, interval_hours: 3, channels: ["log"] });
    const before = (await api.get(PATH)).body;
    const cases: [unknown, string][] = [
      [{}, "No fields were provided"],
      [{ interval_hours: 0 }, "Validation failed"],
      [{ interval_hours: 25, channels: ["mail"] }, "Validation failed"],
      [{ interval_hours: 1.5 }, "Validation failed"],
      [{ interval_hours: "5" }, "Validation failed"],
      [{ enabled: "false" }, "Validation failed"],
      [{ enabled: 1 }, "Validation failed"],
      [{ channels: [] }, "Validation failed"],
      [{ channels: ["log", "log"] }, "Validation failed"],
      [{ channels: ["sms"], interval_hours: 2 }, "Validation failed"],
      [{ channels: "log" }, "Validation failed"],
      [{ enabled: true, colour: "red" }, "Validation failed"],
    ];
    for (const [body, message] of cases) {
      const res = await api.patch(PATH, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.error.code, "validation_failed");
      assert.equal(res.body.error.message, message);
      if (message === "Validation failed") assert.ok(res.body.error.details.length > 0);
    }
    assert.deepEqual((await api.get(PATH)).body, before);
  });

  test("the bounds 1 and 24 are accepted", async ({ api }) => {
    assert.equal((await api.patch(PATH, { interval_hours: 1 })).body.data.interval_hours, 1);
    assert.equal((await api.patch(PATH, { interval_hours: 24 })).body.data.interval_hours, 24);
  });
});
