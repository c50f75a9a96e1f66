// hostemu never outlives whoever started it: a launcher (npx hostemu) or a test process
// (start()) killed with SIGKILL, as a CI step's timeout kills, takes the binary with it
// within a second, and the next one can bind the same port. The binary watches the pipe
// that is its standard input (HOSTEMU_WATCH_STDIN); the kernel closes it when its holder
// dies.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const bin = join(process.cwd(), "node_modules", ".bin", "hostemu");
const linux = process.platform === "linux";

// children lists the processes pid started (Linux: /proc/<pid>/task/*/children).
function children(pid) {
  const out = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.push(...readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      // a thread gone meanwhile
    }
  }
  return out;
}

// running tells whether pid is a live process: an exited one left unreaped by its new
// parent (a zombie, state Z) has stopped.
function running(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

// answers tells whether anything answers at url.
async function answers(url) {
  try {
    await fetch(url + "/_emulator/health", { signal: AbortSignal.timeout(500) });
    return true;
  } catch {
    return false;
  }
}

// stopsWithin waits, polling every 10 ms and at most 5 s, until pid has stopped and
// nothing answers at url; it resolves with how long that took.
async function stopsWithin(pid, url) {
  const began = Date.now();
  while (Date.now() - began < 5000) {
    if (!running(pid) && !(await answers(url))) return Date.now() - began;
    await sleep(10);
  }
  return Infinity;
}

// launch runs node_modules/.bin/hostemu with args and resolves once it listens, with the
// launcher's process and the URL.
async function launch(args) {
  const env = { ...process.env };
  delete env.HOSTEMU_BINARY;
  const child = spawn(bin, ["--tls-addr", "", "--ca-dir", ":memory:", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
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
  return { child, url, stderr: () => err };
}

test("a launcher killed with SIGKILL takes the binary along, and the next one gets the port", { skip: !linux && "reads /proc" }, async (t) => {
  const first = await launch(["--addr", "127.0.0.1:0"]);
  const [pid] = children(first.child.pid);
  assert.ok(pid, "the launcher has no child process");
  t.after(() => running(pid) && process.kill(pid, "SIGKILL"));
  first.child.kill("SIGKILL");
  await once(first.child, "exit");
  const took = await stopsWithin(pid, first.url);
  assert.ok(took < 1000, `the binary ${took === Infinity ? "still runs 5 s" : `took ${took} ms to stop`} after its launcher was killed`);
  t.diagnostic(`the binary stopped ${took} ms after its launcher was killed`);

  const port = new URL(first.url).port;
  const next = await launch(["--addr", `127.0.0.1:${port}`]);
  t.after(() => next.child.exitCode === null && next.child.kill("SIGTERM"));
  assert.equal(next.url, first.url);
  assert.equal((await (await fetch(next.url + "/_emulator/health")).json()).status, "ok");
  next.child.kill("SIGTERM");
  const [code] = await once(next.child, "exit");
  assert.equal(code, 0, next.stderr());
});

test("a test process killed with SIGKILL takes its start()ed hostemu along", { skip: !linux && "reads /proc" }, async (t) => {
  const script = `import { start } from "hostemu/testkit"; const e = await start(); console.log(e.url); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (c) => (err += c));
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", (code) => reject(new Error(`the test process exited ${code}: ${err}`)));
  });
  const [pid] = children(child.pid);
  assert.ok(pid, "the test process has no child process");
  t.after(() => running(pid) && process.kill(pid, "SIGKILL"));
  assert.ok(await answers(url));
  child.kill("SIGKILL");
  await once(child, "exit");
  const took = await stopsWithin(pid, url);
  assert.ok(took < 1000, `hostemu ${took === Infinity ? "still runs 5 s" : `took ${took} ms to stop`} after the test process was killed`);
  t.diagnostic(`hostemu stopped ${took} ms after the test process was killed`);
});
