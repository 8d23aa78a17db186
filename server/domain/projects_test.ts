import assert from "node:assert/strict";
import { apiSuite, uniqueName } from "../testing.ts";

apiSuite("projects", (test) => {
  test("creating a project answers 201 with its name", async ({ api }) => {
    const name = uniqueName();
    const res = await api.post("/api/v1/projects", { project: name, label: "L" });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { data: { project: name } });
  });
});
