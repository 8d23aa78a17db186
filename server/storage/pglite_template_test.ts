/**
 * A new embedded database from the template (`pglite_template.ts`): a whole folder or none, and
 * nothing outside it. That PGlite opens it is `pglite_thread_test.ts`'s data folder test.
 */
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { restoreTemplate, TEMPLATE } from "./pglite_template.ts";

/** A template of one tar entry named `name` holding `body`, compressed as the real one is. */
function templateOf(name: string, body: string): Uint8Array {
  const header = new Uint8Array(512);
  const put = (text: string, at: number) => header.set(new TextEncoder().encode(text), at);
  const data = new TextEncoder().encode(body);
  put(name, 0);
  put("0000644\0", 100);
  put(`${data.length.toString(8).padStart(11, "0")}\0`, 124);
  put("0", 156);
  put("ustar\0", 257);
  const padded = new Uint8Array(Math.ceil(data.length / 512) * 512);
  padded.set(data);
  const tar = new Uint8Array([...header, ...padded, ...new Uint8Array(1024)]);
  return new Uint8Array(zlib.brotliCompressSync(tar));
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("the template unpacks into a new data folder, and a folder of files is kept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "probe-pglite-template-" });
  try {
    await restoreTemplate(`${dir}/pgdata`);
    assert.match(await Deno.readTextFile(`${dir}/pgdata/PG_VERSION`), /^\d+\n$/);
    assert.ok((await Deno.stat(`${dir}/pgdata/global/pg_control`)).size > 0);
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name),
      ["pgdata"],
      "nothing is left beside it",
    );

    await Deno.mkdir(`${dir}/kept`);
    await Deno.writeTextFile(`${dir}/kept/notes.txt`, "mine");
    await assert.rejects(restoreTemplate(`${dir}/kept`));
    assert.equal(await Deno.readTextFile(`${dir}/kept/notes.txt`), "mine");
    assert.equal(await exists(`${dir}/kept/PG_VERSION`), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a damaged template makes no data folder, and none outside it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "probe-pglite-template-" });
  try {
    const whole = await Deno.readFile(TEMPLATE);
    const cut = new URL(`file://${dir}/cut.tar.br`);
    await Deno.writeFile(cut, whole.subarray(0, whole.length / 2));
    await assert.rejects(restoreTemplate(`${dir}/pgdata`, cut));
    assert.equal(await exists(`${dir}/pgdata`), false, "the next start tries again");

    const escaping = new URL(`file://${dir}/escaping.tar.br`);
    await Deno.writeFile(escaping, templateOf("../outside.txt", "no"));
    await assert.rejects(restoreTemplate(`${dir}/inner/pgdata`, escaping), /outside/);
    assert.equal(await exists(`${dir}/inner/outside.txt`), false);
    assert.equal(await exists(`${dir}/inner/pgdata`), false);

    const plain = new URL(`file://${dir}/plain.tar.br`);
    await Deno.writeFile(plain, templateOf("/sub/file.txt", "kept as written"));
    await restoreTemplate(`${dir}/plain`, plain);
    assert.equal(await Deno.readTextFile(`${dir}/plain/sub/file.txt`), "kept as written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
