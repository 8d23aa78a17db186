/**
 * `deno task pglite-template`: writes `server/storage/pglite_template.tar.br`, the data folder
 * PGlite's initdb makes, from which the service creates a new embedded database
 * (`server/storage/pglite_template.ts`). Run it after changing the PGlite version;
 * `pglite_template_test.ts` fails until then if the new version cannot open the old folder.
 *
 * PGlite creates the database in memory (initdb: some 600 MiB, here rather than in the
 * service), checkpoints it so that its files hold everything, and dumps it as a tar, which is
 * compressed with brotli's largest window: the folder holds three near-identical catalogs
 * (template0, template1, postgres), which a window that spans them stores once (1.3 MB against
 * 4.5 MB with gzip). Compressing takes a minute or two.
 */
import { PGlite } from "@electric-sql/pglite";
import zlib from "node:zlib";
import { TEMPLATE } from "../server/storage/pglite_template.ts";

const pglite = await PGlite.create();
await pglite.exec("CHECKPOINT");
const tar = new Uint8Array(await (await pglite.dumpDataDir("none")).arrayBuffer());
await pglite.close();
const compressed = zlib.brotliCompressSync(tar, {
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
    [zlib.constants.BROTLI_PARAM_LGWIN]: zlib.constants.BROTLI_MAX_WINDOW_BITS,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: tar.length,
  },
});
await Deno.writeFile(TEMPLATE, compressed);
console.log(`${TEMPLATE.pathname}: ${tar.length} bytes of tar, ${compressed.length} compressed`);
