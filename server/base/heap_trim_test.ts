import assert from "node:assert/strict";
import { openHeapTrim } from "./heap_trim.ts";

const glibc = Deno.build.os === "linux" && Deno.build.env === "gnu";

Deno.test({
  name: "heap trim: reaches glibc's malloc_trim with the library folders granted",
  ignore: !glibc,
  fn: () => {
    const trim = openHeapTrim();
    assert.ok(trim, "malloc_trim is reachable");
    trim();
  },
});

Deno.test({
  name: "heap trim: nothing, and no error, without the permission",
  ignore: !glibc,
  fn: async () => {
    const url = new URL("./heap_trim.ts", import.meta.url).href;
    const script = await Deno.makeTempFile({ suffix: ".ts" });
    try {
      await Deno.writeTextFile(
        script,
        `import { openHeapTrim } from "${url}"; console.log(openHeapTrim() === null);`,
      );
      // Every permission the service has but the C library's.
      const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-config", "--allow-read", "--allow-env", "--allow-sys", script],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(code, 0, new TextDecoder().decode(stderr));
      assert.equal(new TextDecoder().decode(stdout).trim(), "true");
    } finally {
      await Deno.remove(script);
    }
  },
});
