import assert from "node:assert/strict";
import { DataDirInUseError, LOCK_FILE, lockDataDir } from "./data_dir_lock.ts";

Deno.test("DATA_DIR is held by one lock at a time, even within one process", async () => {
  const dir = await Deno.makeTempDir({ prefix: "probe-data-dir-lock-" });
  try {
    const first = await lockDataDir(dir);
    assert.equal((await Deno.readTextFile(`${dir}/${LOCK_FILE}`)).trim(), String(Deno.pid));

    const second = await lockDataDir(dir).then(() => null, (e) => e);
    assert.ok(second instanceof DataDirInUseError);
    assert.equal(second.pid, Deno.pid);
    assert.equal(
      second.message,
      `DATA_DIR ${dir} is in use by another process (pid ${Deno.pid}); ` +
        "the embedded database allows one process at a time",
    );
    assert.ok(!second.message.includes("\n"));
    // The refusal left the holder's pid in place.
    assert.equal((await Deno.readTextFile(`${dir}/${LOCK_FILE}`)).trim(), String(Deno.pid));

    await first.release();
    await first.release(); // twice is fine
    await using third = await lockDataDir(dir);
    assert.equal(third.path, `${dir}/${LOCK_FILE}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a lock file left by a process that ended does not hold DATA_DIR", async () => {
  const dir = await Deno.makeTempDir({ prefix: "probe-data-dir-lock-" });
  try {
    // What a crashed server leaves: its pid in the file, and no lock (the system released it).
    await Deno.writeTextFile(`${dir}/${LOCK_FILE}`, "999999\n");
    await using lock = await lockDataDir(dir);
    assert.equal((await Deno.readTextFile(lock.path)).trim(), String(Deno.pid));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a holder whose pid cannot be read is named as unknown", async () => {
  const dir = await Deno.makeTempDir({ prefix: "probe-data-dir-lock-" });
  try {
    const holder = await Deno.open(`${dir}/${LOCK_FILE}`, { write: true, create: true });
    assert.ok(await holder.tryLock(true));
    try {
      const refused = await lockDataDir(dir).then(() => null, (e) => e);
      assert.ok(refused instanceof DataDirInUseError);
      assert.equal(refused.pid, null);
      assert.match(refused.message, /\(pid unknown\)/);
    } finally {
      holder.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
