import assert from "node:assert/strict";
import fc from "fast-check";
import { compareKeys } from "./keys.ts";

Deno.test("keys order as the numbers they are", () => {
  assert.deepEqual(["10", "9", "100", "11", "2"].sort(compareKeys), ["2", "9", "10", "11", "100"]);
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
      fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
      (a, b) => {
        const got = Math.sign(compareKeys(String(a), String(b)));
        assert.equal(got, a < b ? -1 : a > b ? 1 : 0);
      },
    ),
  );
});
