// Two tests of known length that tools/slowest_tests_test.ts runs by name (the tier does not:
// the name does not end in _test.ts).
Deno.test("waits 200 ms", () => new Promise((resolve) => setTimeout(resolve, 200)));
Deno.test("waits 200 ms more", () => new Promise((resolve) => setTimeout(resolve, 200)));
