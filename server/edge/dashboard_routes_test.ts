/**
 * The dashboard's places for its settings and incidents pages (`server/ui/routes.js`), and the
 * incidents page's filters as they go into the address and come back from it
 * (`server/ui/incidents_page.js`): plain functions, tested here without a browser.
 */
import assert from "node:assert/strict";
import { href, parseRoute } from "../ui/routes.js";
import { filtersOf, queryOf } from "../ui/incidents_page.js";

Deno.test("the settings pages and the incidents page have places of their own", () => {
  assert.deepEqual(parseRoute("#/targets"), { name: "targets" });
  assert.deepEqual(parseRoute("#/alert-policy"), { name: "alertPolicy" });
  assert.deepEqual(parseRoute("#/incidents"), { name: "incidents", query: "" });
  assert.deepEqual(parseRoute("#/incidents?state=resolved&project=shop"), {
    name: "incidents",
    query: "state=resolved&project=shop",
  });
  for (
    const [segment, name] of [
      ["alerts", "projectAlerts"],
      ["maintenance", "maintenance"],
      ["status-page", "statusPage"],
      ["badges", "badges"],
    ]
  ) {
    assert.deepEqual(parseRoute(`#/projects/shop.v2/${segment}`), { name, project: "shop.v2" });
  }
  // Each href leads back to its place.
  assert.deepEqual(parseRoute(href.projectAlerts("a-b")), {
    name: "projectAlerts",
    project: "a-b",
  });
  assert.deepEqual(parseRoute(href.maintenance("a")), { name: "maintenance", project: "a" });
  assert.deepEqual(parseRoute(href.statusPage("a")), { name: "statusPage", project: "a" });
  assert.deepEqual(parseRoute(href.badges("a")), { name: "badges", project: "a" });
  assert.deepEqual(parseRoute(href.targets()), { name: "targets" });
  assert.deepEqual(parseRoute(href.alertPolicy()), { name: "alertPolicy" });
  assert.deepEqual(parseRoute(href.settings()), { name: "settings" });
  // What is not one of them stays not found, and the older places are as they were.
  for (
    const hash of [
      "#/targets/x",
      "#/projects/shop/alerts/x",
      "#/incidents/1",
      "#/policy",
      "#/settings/x",
    ]
  ) {
    assert.deepEqual(parseRoute(hash), { name: "notFound" }, hash);
  }
  assert.deepEqual(parseRoute("#/projects/shop"), { name: "project", project: "shop" });
  assert.deepEqual(parseRoute("#/projects/shop/probes/ab12"), {
    name: "probe",
    project: "shop",
    probeId: "ab12",
  });
});

Deno.test("the incidents filters go into the address and come back the same", () => {
  const cases = [
    { state: "open", project: "", probe: "" },
    { state: "resolved", project: "", probe: "" },
    { state: "all", project: "shop", probe: "" },
    { state: "open", project: "a b&c", probe: "0123456789abcdef" },
  ];
  for (const filters of cases) {
    const route = parseRoute(href.incidents(queryOf(filters)));
    assert.equal(route.name, "incidents");
    assert.deepEqual(filtersOf(route.name === "incidents" ? route.query : ""), filters);
  }
  // The defaults (open, then resolved) leave the address bare; what the page cannot use is
  // dropped.
  assert.equal(href.incidents(queryOf({ state: "all", project: "", probe: "" })), "#/incidents");
  assert.deepEqual(filtersOf(""), { state: "all", project: "", probe: "" });
  assert.deepEqual(filtersOf("state=closed&probe=ab"), { state: "all", project: "", probe: "" });
});
