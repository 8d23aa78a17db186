/**
 * What the dashboard lets a caller do (`abilities`, `server/ui/scope.js`: the controls each page
 * shows) against what the service lets it do, for each role and scope, with the role and
 * projects `GET /whoami` tells: plain functions, without a browser, on PGlite and, with
 * TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { abilities } from "../ui/scope.js";
import { apiSuite, uniqueName } from "../testing/app.ts";

type Role = "viewer" | "editor" | "admin";
interface Caller {
  name: string;
  key?: string;
  role: Role;
  projects: string[] | null;
}

apiSuite("dashboard: what a caller may do", (test) => {
  test("whoami tells the role and projects; the controls shown are the calls allowed", async ({ api }) => {
    const project = uniqueName();
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const made = async (role: Role, projects: string[] | null): Promise<Caller> => {
      const name = uniqueName("k");
      const answer = await api.post("/api/v1/api-keys", { name, role, projects });
      assert.equal(answer.status, 201, answer.text);
      return { name, key: answer.body.data.key, role, projects };
    };
    const callers: Caller[] = [
      { name: "SERVICE_API_KEY", role: "admin", projects: null },
      await made("admin", [project]),
      await made("editor", null),
      await made("editor", [project]),
      await made("viewer", null),
      await made("viewer", [project]),
    ];
    for (const caller of callers) {
      const { key } = caller;
      const whoami = await api.get("/api/v1/whoami", { key });
      assert.equal(whoami.status, 200, whoami.text);
      const { name, role, projects } = whoami.body.data;
      assert.deepEqual({ name, role, projects }, {
        name: caller.name,
        role: caller.role,
        projects: caller.projects,
      });
      const may = abilities({ role, projects });
      const label = `${role} of ${projects ?? "every project"}`;
      const change = await api.patch(`/api/v1/projects/${project}`, { label: "x" }, { key });
      assert.equal(change.status, may.write ? 200 : 403, `${label}: change ${change.text}`);
      const create = await api.post("/api/v1/projects", { project: uniqueName() }, { key });
      assert.equal(create.status, may.createProjects ? 201 : 403, `${label}: create`);
      const location = await api.post("/api/v1/locations", { name: uniqueName("l") }, { key });
      assert.equal(location.status, may.administer ? 201 : 403, `${label}: a location`);
      const keys = await api.get("/api/v1/api-keys", { key });
      assert.equal(keys.status, may.administer ? 200 : 403, `${label}: the keys`);
    }
    // Each ability is someone's and not everyone's: the table above tells them apart.
    const table = callers.map(abilities);
    for (const ability of ["write", "createProjects", "administer"] as const) {
      assert.ok(table.some((t) => t[ability]) && table.some((t) => !t[ability]), ability);
    }
  });
});
