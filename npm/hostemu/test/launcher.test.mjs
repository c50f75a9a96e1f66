// The launcher (bin/hostemu) and its platform resolution (lib/platform.js), with fake
// binaries: no Go build needed. Run: node --test npm/hostemu/test/
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";

const require = createRequire(import.meta.url);
const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const launcher = join(pkg, "bin", "hostemu");
const platform = require(join(pkg, "lib", "platform.js"));
const posix = process.platform !== "win32";

// fakeBinary writes an executable that reports its arguments, exits with the code its
// first argument names, and on a signal says so and exits 7.
function fakeBinary(dir) {
  const file = join(dir, "fake-hostemu");
  writeFileSync(
    file,
    `#!${process.execPath}
for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(s, () => { console.log("got " + s); process.exit(7); });
const args = process.argv.slice(2);
console.log(JSON.stringify(args));
if (args[0] === "wait") { console.log("ready"); setInterval(() => {}, 1000); }
else if (args[0] === "watch") {
  // as hostemu --watch-stdin: stop when standard input ends
  console.log(JSON.stringify({ pid: process.pid, watch: process.env.HOSTEMU_WATCH_STDIN || null, stdinTTY: !!process.stdin.isTTY }));
  process.stdin.resume();
  process.stdin.on("end", () => process.exit(0));
  setInterval(() => {}, 1000);
}
else if (args[0] === "die") process.kill(process.pid, "SIGKILL");
else process.exit(Number(args[0] || 0));
`,
  );
  chmodSync(file, 0o755);
  return file;
}

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), "hostemu-launcher-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// env is this environment without HOSTEMU_BINARY, plus extra.
function env(extra) {
  const e = { ...process.env, ...extra };
  if (!extra || !("HOSTEMU_BINARY" in extra)) delete e.HOSTEMU_BINARY;
  return e;
}

test("packageFor names the five platform packages, null elsewhere", () => {
  assert.equal(platform.packageFor("linux", "x64"), "@hostemu/linux-x64");
  assert.equal(platform.packageFor("linux", "arm64"), "@hostemu/linux-arm64");
  assert.equal(platform.packageFor("darwin", "x64"), "@hostemu/darwin-x64");
  assert.equal(platform.packageFor("darwin", "arm64"), "@hostemu/darwin-arm64");
  assert.equal(platform.packageFor("win32", "x64"), "@hostemu/win32-x64");
  assert.equal(platform.packageFor("win32", "arm64"), null);
  assert.equal(platform.packageFor("freebsd", "x64"), null);
  assert.equal(Object.keys(platform.PACKAGES).length, 5);
});

test("binaryPath resolves the platform package's binary, HOSTEMU_BINARY first", () => {
  const seen = [];
  const resolve = (id) => {
    seen.push(id);
    return "/pkgs/" + id;
  };
  assert.equal(platform.binaryPath({ env: {}, platform: "darwin", arch: "arm64", resolve }), "/pkgs/@hostemu/darwin-arm64/bin/hostemu");
  assert.equal(platform.binaryPath({ env: {}, platform: "win32", arch: "x64", resolve }), "/pkgs/@hostemu/win32-x64/hostemu.exe");
  assert.equal(platform.binaryPath({ env: { HOSTEMU_BINARY: "/my/hostemu" }, platform: "aix", arch: "ppc64", resolve }), "/my/hostemu");
  assert.deepEqual(seen, ["@hostemu/darwin-arm64/bin/hostemu", "@hostemu/win32-x64/hostemu.exe"]);
});

test("binaryPath on a platform without a package names it and the container image", () => {
  assert.throws(
    () => platform.binaryPath({ env: {}, platform: "freebsd", arch: "x64", resolve: () => assert.fail("resolved") }),
    (err) => err.message.includes("freebsd-x64") && err.message.includes("ghcr.io/hostemu/hostemu") && err.message.includes("HOSTEMU_BINARY"),
  );
});

test("binaryPath with the platform package missing says to reinstall with optional dependencies", () => {
  const resolve = () => {
    const e = new Error("Cannot find module");
    e.code = "MODULE_NOT_FOUND";
    throw e;
  };
  assert.throws(
    () => platform.binaryPath({ env: {}, platform: "linux", arch: "arm64", resolve }),
    (err) => err.message.includes("@hostemu/linux-arm64") && err.message.includes("--omit=optional") && err.message.includes("MODULE_NOT_FOUND"),
  );
});

test("the launcher on an unsupported platform prints the message and exits 1", (t) => {
  const dir = tempDir(t);
  const preload = join(dir, "fake-platform.cjs");
  writeFileSync(preload, `Object.defineProperty(process, "platform", { value: "aix" }); Object.defineProperty(process, "arch", { value: "ppc64" });\n`);
  const r = spawnSync(process.execPath, ["--require", preload, launcher, "version"], { env: env(), encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /no hostemu binary on npm for this platform \(aix-ppc64\)/);
  assert.match(r.stderr, /docker run --rm -p 4700:4700 -p 4743:4743 ghcr\.io\/hostemu\/hostemu/);
  assert.equal(r.stdout, "");
});

test("the launcher resolves the installed platform package", { skip: !posix && "fake binaries are scripts" }, (t) => {
  const name = platform.packageFor(process.platform, process.arch);
  if (!name) return t.skip(`no package for ${process.platform}-${process.arch}`);
  const dir = tempDir(t);
  const nm = join(dir, "node_modules");
  cpSync(join(pkg, "bin"), join(nm, "hostemu", "bin"), { recursive: true });
  cpSync(join(pkg, "lib"), join(nm, "hostemu", "lib"), { recursive: true });
  const bin = join(nm, name, "bin");
  mkdirSync(bin, { recursive: true });
  cpSync(fakeBinary(dir), join(bin, "hostemu"));
  writeFileSync(join(nm, name, "package.json"), JSON.stringify({ name, version: "0.0.0" }));
  const r = spawnSync(process.execPath, [join(nm, "hostemu", "bin", "hostemu"), "0", "--addr", "a b"], { env: env(), encoding: "utf8" });
  assert.equal(r.stderr, "");
  assert.equal(r.status, 0);
  assert.deepEqual(JSON.parse(r.stdout), ["0", "--addr", "a b"]);

  // Without it, the launcher says which package is missing.
  rmSync(join(nm, name), { recursive: true });
  const missing = spawnSync(process.execPath, [join(nm, "hostemu", "bin", "hostemu")], { env: env(), encoding: "utf8" });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, new RegExp(`the package ${name}, which holds the binary for this platform`));
});

test("the launcher passes arguments, stdio and the exit code through", { skip: !posix && "fake binaries are scripts" }, (t) => {
  const fake = fakeBinary(tempDir(t));
  for (const code of [0, 1, 2, 42]) {
    const r = spawnSync(process.execPath, [launcher, String(code), "--flag=x", ""], { env: env({ HOSTEMU_BINARY: fake }), encoding: "utf8" });
    assert.equal(r.status, code);
    assert.deepEqual(JSON.parse(r.stdout), [String(code), "--flag=x", ""]);
  }
  const died = spawnSync(process.execPath, [launcher, "die"], { env: env({ HOSTEMU_BINARY: fake }), encoding: "utf8" });
  assert.equal(died.signal, "SIGKILL"); // dies of the binary's signal
  const none = spawnSync(process.execPath, [launcher], { env: env({ HOSTEMU_BINARY: join(tempDir(t), "nope") }), encoding: "utf8" });
  assert.equal(none.status, 1);
  assert.match(none.stderr, /cannot run .*nope/);
});

for (const sig of ["SIGINT", "SIGTERM"]) {
  test(`the launcher forwards ${sig} to the binary, once`, { skip: !posix && "POSIX signals" }, async (t) => {
    const fake = fakeBinary(tempDir(t));
    const child = spawn(process.execPath, [launcher, "wait"], { env: env({ HOSTEMU_BINARY: fake }), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8");
    const ready = new Promise((resolve) => child.stdout.on("data", (c) => { out += c; if (out.includes("ready")) resolve(); }));
    await ready;
    child.kill(sig);
    const [code] = await once(child, "exit");
    assert.equal(code, 7);
    assert.equal(out.split("\n").filter((l) => l.startsWith("got ")).join(","), `got ${sig}`);
  });
}

// alive tells whether pid is a live process (a zombie, exited and not yet reaped by its
// new parent, is not).
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return process.platform !== "linux";
  }
}

test("the binary stops when the launcher is killed with SIGKILL", { skip: !posix && "POSIX signals" }, async (t) => {
  const fake = fakeBinary(tempDir(t));
  const child = spawn(process.execPath, [launcher, "watch"], { env: env({ HOSTEMU_BINARY: fake }), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8");
  const first = await new Promise((resolve, reject) => {
    child.stdout.on("data", (c) => {
      out += c;
      const m = /^(\{.*\})$/m.exec(out); // after the line of its arguments
      if (m) resolve(JSON.parse(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`the launcher exited ${code} first`)));
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (alive(first.pid)) process.kill(first.pid, "SIGKILL");
  });
  assert.equal(first.watch, "1"); // HOSTEMU_WATCH_STDIN=1
  assert.equal(first.stdinTTY, false); // a pipe, the launcher's
  child.kill("SIGKILL");
  await once(child, "exit");
  const killed = Date.now();
  while (alive(first.pid) && Date.now() - killed < 5000) await sleep(10);
  assert.equal(alive(first.pid), false, "the binary still runs 5 s after the launcher was killed");
  assert.ok(Date.now() - killed < 1000, `the binary took ${Date.now() - killed} ms to stop`);
});
