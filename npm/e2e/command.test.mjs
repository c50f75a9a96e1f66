// The installed command: node_modules/.bin/hostemu runs the platform package's binary,
// which serves, and stops cleanly on the SIGTERM the launcher passes on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";

const bin = join(process.cwd(), "node_modules", ".bin", process.platform === "win32" ? "hostemu.cmd" : "hostemu");

test("npx hostemu serves, and stops cleanly on SIGTERM", { skip: process.platform === "win32" && "POSIX signals" }, async () => {
  const env = { ...process.env };
  delete env.HOSTEMU_BINARY;
  const child = spawn(bin, ["--addr", "127.0.0.1:0", "--tls-addr", "", "--ca-dir", ":memory:", "--clock", "manual"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (c) => (err += c));
  const url = await new Promise((resolve, reject) => {
    child.stdout.on("data", (c) => {
      out += c;
      const m = /^hostemu listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
      if (m) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`hostemu exited ${code} before listening: ${err}`)));
  });
  const health = await (await fetch(url + "/_emulator/health")).json();
  assert.equal(health.status, "ok");
  assert.equal(health.clock, "manual");
  child.kill("SIGTERM");
  const [code, signal] = await once(child, "exit");
  assert.equal(signal, null);
  assert.equal(code, 0, err);
  assert.match(err, /msg=stopped/); // a clean stop, not a kill
});
