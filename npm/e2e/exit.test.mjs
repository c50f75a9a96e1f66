// Nothing leaks when a test forgets close() or throws: a process that used start()
// takes its hostemu with it when it exits, and one that used connect() deletes its
// namespace when its event loop runs dry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { start } from "hostemu/testkit";

// run runs a script in a node process of its own, here (where hostemu/testkit
// resolves), and resolves with its exit code and what it printed.
async function run(script, ...args) {
  const child = spawn(process.execPath, ["--input-type=module", "-e", script, ...args], { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (err += c));
  const [code] = await once(child, "exit");
  return { code, out: out.trim(), err };
}

// gone polls url until nothing answers there: the emulator is another process's child,
// which this one cannot wait for. Bounded: 5 s.
async function gone(url) {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await fetch(url + "/_emulator/health");
    } catch {
      return true;
    }
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
}

test("a process that forgot close() takes its hostemu along", async () => {
  const r = await run(`import { start } from "hostemu/testkit"; const e = await start(); console.log(e.url);`);
  assert.equal(r.code, 0, r.err);
  assert.ok(await gone(r.out), `hostemu at ${r.out} still answers`);
});

test("a process that threw takes its hostemu along", async () => {
  const r = await run(`import { start } from "hostemu/testkit"; const e = await start(); console.log(e.url); throw new Error("boom");`);
  assert.equal(r.code, 1);
  assert.match(r.err, /boom/);
  assert.ok(await gone(r.out), `hostemu at ${r.out} still answers`);
});

test("a process that forgot close() deletes its namespace", async (t) => {
  const server = await start();
  t.after(() => server.close());
  const r = await run(`import { connect } from "hostemu/testkit"; const e = await connect(process.argv[1]); console.log(e.namespace);`, server.url);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^ns_/);
  const list = await (await fetch(server.url + "/_emulator/namespaces")).json();
  assert.deepEqual(list.namespaces.map((n) => n.namespace).filter((n) => n === r.out), []);
});
