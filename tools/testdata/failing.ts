// A test that fails, for tools/test_tier_test.ts (the tier does not run it: the name does not end
// in _test.ts).
Deno.test("fails", () => {
  throw new Error("failed on purpose");
});
