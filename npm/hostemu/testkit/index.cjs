"use strict";
// hostemu/testkit: hostemu for JavaScript tests, as the Go package testkit is for Go's.
//
// start() spawns this platform's hostemu binary on a free loopback port; connect() makes
// a namespace, a world of its own, on a hostemu that is already running (a CI service
// container). Both give an Emulator with the same methods. Control calls go through
// node:http and the real timers of node:timers, so that a test runner's fake timers or
// fetch mocks cannot stall them. No dependencies. index.mjs re-exports this file for
// ESM, so both module systems share one HostemuError class and one registry of live
// emulators.

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const http = require("node:http");
const https = require("node:https");
const path = require("node:path");
const zlib = require("node:zlib");
const { setTimeout: sleep } = require("node:timers/promises");
const { setTimeout: timer, clearTimeout: clearTimer } = require("node:timers");
const { binaryPath } = require("../lib/platform.js");
const { edgeFetch } = require("./edge.cjs");

// defaultClockStart is where a manual clock starts unless told: a fixed instant gives the
// same ids, timestamps and generated fixtures on every run (the Go testkit's too).
const defaultClockStart = "2026-01-01T00:00:00Z";
// startTimeout bounds how long start() waits for the binary to listen.
const startTimeout = 10_000;
// healthTimeout is how long connect() waits for a starting hostemu to answer.
const healthTimeout = 5_000;
// callTimeout bounds a control call that is not an await: a hung call fails the test.
const callTimeout = 30_000;
// awaitGrace is how much longer than its own timeout an await's call may take.
const awaitGrace = 10_000;
// stopTimeout is how long close() lets the binary shut down before killing it.
const stopTimeout = 6_000;

/** An error answer of hostemu's control API: its status, and its envelope's code and message. */
class HostemuError extends Error {
  constructor(status, code, message, method, urlPath) {
    super(message);
    this.name = "HostemuError";
    this.status = status;
    this.code = code;
    this.method = method;
    this.path = urlPath;
    // The first line of the stack is what runners print: give it the call and the code.
    if (typeof this.stack === "string") {
      const at = this.stack.indexOf("\n    at ");
      this.stack = `HostemuError: ${method} ${urlPath}: ${status} ${code}: ${message}${at < 0 ? "" : this.stack.slice(at)}`;
    }
  }
}

// live holds the emulators not yet closed: started processes are killed when this
// process exits, namespaces deleted when its event loop runs dry, so that a test that
// threw before its close() leaks nothing (an abandoned namespace would also expire
// after the server's --namespace-ttl).
const live = new Set();
let hooked = false;

function track(emu) {
  live.add(emu);
  if (hooked) return;
  hooked = true;
  process.on("exit", () => {
    for (const e of live) e._r.kill();
  });
  process.on("beforeExit", () => {
    const pending = [...live].filter((e) => !e._r.child);
    if (pending.length > 0) Promise.allSettled(pending.map((e) => e.close()));
  });
}

// duration turns a number of milliseconds into the duration string the control API
// takes; a string is passed as it is ("90s", "1h30m", "2d").
function duration(by) {
  if (typeof by === "number") {
    if (!Number.isFinite(by) || by < 0) throw new TypeError(`hostemu: a duration must be a non-negative number of ms, got ${by}`);
    return `${Math.round(by)}ms`;
  }
  if (typeof by === "string") return by;
  throw new TypeError(`hostemu: a duration is a string like "5m" or a number of ms, got ${typeof by}`);
}

// durationMs reads a duration string roughly, to size a call's timeout; NaN if it cannot.
function durationMs(d) {
  if (typeof d === "number") return d;
  const units = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/gy;
  let ms = 0;
  let m;
  let end = 0;
  while ((m = re.exec(d)) !== null) {
    ms += Number(m[1]) * units[m[2]];
    end = re.lastIndex;
  }
  return end === d.length && end > 0 ? ms : NaN;
}

function rfc3339(t) {
  if (t instanceof Date) return t.toISOString().replace(/\.000Z$/, "Z");
  return String(t);
}

// remote is what an Emulator needs to reach its hostemu.
class Remote {
  constructor(url, controlToken) {
    this.url = url;
    this.controlToken = controlToken || "";
    this.namespace = "";
    this.caPEM = null; // a promise of the CA certificate, for fetch
    this.child = null; // start()'s process
    this.exited = null; // a promise of its exit
    const mod = url.startsWith("https:") ? https : http;
    this.mod = mod;
    this.agent = new mod.Agent({ keepAlive: true });
  }

  // controlPath is a control route's path in this world: under its namespace, if any.
  controlPath(p) {
    if (!this.namespace || !p.startsWith("/_emulator/") || p.startsWith("/_emulator/namespaces")) return p;
    return "/_emulator/namespaces/" + this.namespace + p.slice("/_emulator".length);
  }

  // send makes one HTTP request and resolves with its status, headers and body.
  send(method, p, body, timeoutMs, headers) {
    const h = { ...headers };
    let payload;
    if (body instanceof Uint8Array) {
      payload = body; // sent as it is, with the content-type of headers
      h["content-length"] = String(payload.length);
    } else if (body !== undefined) {
      payload = Buffer.from(JSON.stringify(body));
      h["content-type"] = "application/json";
      h["content-length"] = String(payload.length);
    }
    if (this.controlToken && p.startsWith("/_emulator/")) h.authorization = "Bearer " + this.controlToken;
    return new Promise((resolve, reject) => {
      const req = this.mod.request(this.url + p, { method, headers: h, agent: this.agent }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      let t;
      if (timeoutMs > 0) {
        t = timer(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        t.unref();
      }
      req.on("error", (err) => reject(err));
      req.on("close", () => t && clearTimer(t));
      req.end(payload);
    });
  }

  // call is a control call: JSON in and out, an error answer thrown as a HostemuError.
  async call(method, p, body, opts) {
    const o = opts || {};
    const full = o.root ? p : this.controlPath(p);
    let res;
    try {
      res = await this.send(method, full, body, o.timeoutMs === undefined ? callTimeout : o.timeoutMs, o.headers);
    } catch (err) {
      throw new Error(`hostemu: ${method} ${full} at ${this.url}: ${err.message}`, { cause: err });
    }
    if (res.status < 200 || res.status > 299) throw decodeError(res, method, full);
    if (o.raw) return res.body;
    if (res.body.length === 0) return undefined;
    try {
      return JSON.parse(res.body.toString("utf8"));
    } catch {
      throw new Error(`hostemu: ${method} ${full}: the answer is not JSON: ${res.body.toString("utf8", 0, 200)}`);
    }
  }

  kill() {
    const c = this.child;
    if (c && c.exitCode === null && c.signalCode === null) c.kill("SIGTERM");
  }
}

function decodeError(res, method, p) {
  let env;
  try {
    env = JSON.parse(res.body.toString("utf8"));
  } catch {
    env = null;
  }
  const e = env && env.error;
  if (!e || typeof e.code !== "string") {
    return new HostemuError(res.status, "(no error envelope)", res.body.toString("utf8", 0, 200), method, p);
  }
  const err = new HostemuError(res.status, e.code, e.message, method, p);
  if (Array.isArray(e.near_misses)) err.nearMisses = e.near_misses; // an await_timeout's: what almost matched
  return err;
}

/** The faults of one emulator's world. */
class Faults {
  constructor(emu) {
    this._e = emu;
  }

  /** Adds a fault; resolves with its id (flt_…). It stays until removed or reset. */
  async add(spec) {
    const out = await this._e._r.call("POST", "/_emulator/faults", spec);
    return out.id;
  }

  /** Removes the fault id (a HostemuError fault_not_found if there is none). */
  async remove(id) {
    await this._e._r.call("DELETE", "/_emulator/faults/" + encodeURIComponent(id));
  }

  /** Removes every fault added through the API (not the scenario's). */
  async clear() {
    await this._e._r.call("DELETE", "/_emulator/faults");
  }

  /** The faults in force, API-added and the active scenario's, with their hits. */
  async list() {
    const out = await this._e._r.call("GET", "/_emulator/faults");
    return out.faults;
  }

  /** How many times the fault id has fired; a HostemuError fault_not_found once it is gone. Fetches this fault alone (GET /_emulator/faults/{id}). */
  async hits(id) {
    return (await this._get(id)).hits;
  }

  /** While the fault id has no hits, what almost matched it (up to 5 of the newest 200 journaled requests, each with what it had in the fields that differed); [] once it has fired. A HostemuError fault_not_found once it is gone. Fetches this fault alone: its near misses are weighed, not every fault's as list() does. */
  async nearMisses(id) {
    return (await this._get(id)).near_misses || [];
  }

  // _get is the fault id as GET /_emulator/faults/{id} answers it: the listing's element,
  // at one fault's cost; the server's 404 fault_not_found is thrown as a HostemuError.
  // A hostemu from before that route (a service container older than this package)
  // answers 405 or 404 not_found: the fault is then read from the listing.
  async _get(id) {
    const path = "/_emulator/faults/" + encodeURIComponent(id);
    try {
      return await this._e._r.call("GET", path);
    } catch (err) {
      if (!(err instanceof HostemuError) || !(err.status === 405 || err.code === "not_found")) throw err;
      const f = (await this.list()).find((x) => x.id === id);
      if (f) return f;
      throw new HostemuError(404, "fault_not_found", `no fault has the id ${id}: it was never added, or it was removed or gone with a reset`, "GET", path);
    }
  }
}

/** One running hostemu, from start() or connect(). */
class Emulator {
  constructor(r, creds, extra) {
    Object.defineProperty(this, "_r", { value: r });
    // in a mutation run, the coordinator's name for this world (see mutantHello)
    Object.defineProperty(this, "_mutant", { value: null, writable: true });
    this.url = r.url;
    this.cipherUrl = (extra && extra.cipherUrl) || r.url;
    this.tlsUrl = (extra && extra.tlsUrl) || "";
    this.namespace = r.namespace;
    this.tokens = creds.tokens;
    this.cipherKey = creds.cipherKey;
    this.faults = new Faults(this);
    this._closing = null;
    this._epoch = watching.epoch; // see saveBundlesOnFailure
  }

  /** The emulated time (RFC 3339). */
  async now() {
    return (await this._r.call("GET", "/_emulator/clock")).now;
  }

  /** Moves a manual clock forward ("90s", "5m", "2d", or ms); resolves with the new time once every transition due by then has happened. */
  async advance(by) {
    return (await this._r.call("POST", "/_emulator/clock/advance", { by: duration(by) })).now;
  }

  /** POST /_emulator/await: waits (on a manual clock, advances) until condition holds; a HostemuError await_timeout if it does not in time. */
  async await(condition) {
    const c = { ...condition };
    let timeoutMs = callTimeout;
    if (c.timeout !== undefined) {
      c.timeout = duration(c.timeout);
      const ms = durationMs(c.timeout);
      // On a manual clock the timeout is emulated time and costs nothing; on a real one
      // the server waits that long: the call may take as long, and then some.
      timeoutMs = Number.isNaN(ms) ? 0 : Math.max(callTimeout, ms + awaitGrace);
    }
    return this._r.call("POST", "/_emulator/await", c, { timeoutMs });
  }

  /** Forces a deployment's or a domain's status now, with the error it reports when status is "error". */
  async forceStatus(kind, id, status, error) {
    if (kind !== "deployment" && kind !== "domain") throw new TypeError(`hostemu: forceStatus takes "deployment" or "domain", got ${JSON.stringify(kind)}`);
    const body = { status };
    if (error) body.error = { code: error.code, message: error.message };
    await this._r.call("POST", `/_emulator/${kind}s/${encodeURIComponent(id)}/status`, body);
  }

  /** The journaled requests filter selects, oldest first. */
  async requests(filter) {
    return (await this._queryRequests(filter)).requests;
  }

  /** When filter selects no journaled request, what almost matched it (GET /_emulator/requests' near_misses); [] when it selects one, when nothing came close, or for a filter of only since and limit. */
  async requestNearMisses(filter) {
    return (await this._queryRequests(filter)).near_misses || [];
  }

  async _queryRequests(filter) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filter || {})) {
      if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
    }
    const s = q.toString();
    return this._r.call("GET", "/_emulator/requests" + (s ? "?" + s : ""));
  }

  /** Empties the request journal. */
  async clearRequests() {
    await this._r.call("DELETE", "/_emulator/requests");
  }

  /** Mints a hosting token of scope (read, deploy, admin) in this world. */
  async token(scope) {
    return (await this._r.call("POST", "/_emulator/tokens", { scope })).token;
  }

  /** Makes the named scenario active. */
  async useScenario(name) {
    await this._r.call("PUT", "/_emulator/scenarios/active", { name });
  }

  /** Back to the start-up world: fixtures, scenario, no API faults, empty journal, the clock at its start. */
  async reset() {
    await this._r.call("POST", "/_emulator/reset");
  }

  /** The whole state of the world (GET /_emulator/state). */
  async state() {
    return this._r.call("GET", "/_emulator/state");
  }

  /** Replaces the state of the world (validated first; a bad one changes nothing). */
  async setState(state) {
    await this._r.call("PUT", "/_emulator/state", state);
  }

  /** The world's failure bundle (a gzipped tar): written to file and resolving with its path, or with no file resolving with its bytes. */
  async bundle(file) {
    const bytes = await this._r.call("GET", "/_emulator/bundle", undefined, { raw: true });
    if (file === undefined) return bytes;
    const abs = path.resolve(String(file));
    await fs.promises.mkdir(path.dirname(abs), { recursive: true });
    await fs.promises.writeFile(abs, bytes);
    return abs;
  }

  /** Replaces the world with a failure bundle's (PUT /_emulator/bundle): a file's path, or the bundle's bytes. */
  async loadBundle(fileOrBytes) {
    const bytes = fileOrBytes instanceof Uint8Array ? fileOrBytes : await fs.promises.readFile(String(fileOrBytes));
    await this._r.call("PUT", "/_emulator/bundle", bytes, { headers: { "content-type": "application/gzip" } });
  }

  /** Writes the bundle as $HOSTEMU_ARTIFACTS/<name>.hostemu.tgz (default hostemu-artifacts/), prints its path and the replay command, and resolves with the path. saveBundlesOnFailure calls it when a test failed. */
  async saveBundle(name) {
    return writeArtifact(name, await this.bundle());
  }

  /** Which parts of the API the world has seen (GET /_emulator/coverage); { namespaces: "all" } for the union over every namespace. */
  async coverage(options) {
    const q = new URLSearchParams();
    if (options && options.namespaces === "all") q.set("namespaces", "all");
    if (options && options.ignore !== undefined) q.set("ignore", Array.isArray(options.ignore) ? options.ignore.join(",") : options.ignore);
    const path = "/_emulator/coverage" + (q.size > 0 ? "?" + q : "");
    // The union over every namespace is the server's, asked at the root.
    if (options && options.namespaces === "all") return this._r.call("GET", path, undefined, { root: true });
    return this._r.call("GET", path);
  }

  /** Starts counting the world's coverage afresh. */
  async resetCoverage() {
    await this._r.call("DELETE", "/_emulator/coverage");
  }

  /** fetch for the edge: opens a deployment's url or a custom domain's as the API gave it (see edge.cjs). */
  fetch(input, init) {
    return edgeFetch(this, input, init);
  }

  /** Stops the process of start(), or deletes the namespace of connect(); again, it does nothing. Under saveBundlesOnFailure, it keeps the world's bundle first, for the test's afterEach. */
  close() {
    if (!this._closing) {
      // a world closed in the test that made it is gone by the test's afterEach: keep its bundle
      let keep = Promise.resolve();
      if (watching.on && this._epoch === watching.epoch) {
        // listed now, for this test's afterEach to wait for, even if close() is not awaited
        keep = this.bundle().then((bytes) => bytes, () => null);
        watching.closed.push(keep);
      }
      this._closing = keep.then(() => collect(this)).then(() => mutantReport(this)).then(() => this._close()).finally(() => {
        live.delete(this);
        this._r.agent.destroy();
      });
    }
    return this._closing;
  }

  async _close() {
    const r = this._r;
    if (r.child) {
      r.child.ref(); // start() unref'd it: this process must live to see it exit
      r.kill();
      const t = timer(() => r.child.kill("SIGKILL"), stopTimeout);
      try {
        await r.exited;
      } finally {
        clearTimer(t);
      }
      return;
    }
    if (r.namespace) {
      try {
        await r.call("DELETE", "/_emulator/namespaces/" + encodeURIComponent(r.namespace));
      } catch (err) {
        // Gone already (expired, or the server stopped): nothing is left to clean.
        const gone = err instanceof HostemuError ? err.status === 404 : err.cause && err.cause.code === "ECONNREFUSED";
        if (!gone) throw err;
      }
    }
  }
}

if (typeof Symbol.asyncDispose === "symbol") {
  Emulator.prototype[Symbol.asyncDispose] = function () {
    return this.close();
  };
}

// Mutation runs (docs/mutate.md, "How the testkits take part"): `hostemu mutate` runs the
// suite with HOSTEMU_MUTANT set to its coordinator's URL. Each world says which test made
// it and arms the fault it is handed before the test gets it; at close() it posts its
// coverage, from which the baseline learns which operations each test called. Outside
// a mutation run none of this happens: start() and connect() read one variable more.

// mutantTimeout bounds a call to the coordinator, on 127.0.0.1.
const mutantTimeout = 10_000;

// coordinator is the Remote of $HOSTEMU_MUTANT, made at the first world.
let coordinator = null;

// mutantPost posts body to the coordinator's path and resolves with its answer (null
// when it has no body); an error answer, or none, rejects.
async function mutantPost(p, body) {
  const base = process.env.HOSTEMU_MUTANT.replace(/\/+$/, ""); // as Go's and Python's testkits read it
  if (!coordinator || coordinator.url !== base) coordinator = new Remote(base);
  const res = await coordinator.send("POST", p, body, mutantTimeout);
  const text = res.body.toString("utf8");
  if (res.status < 200 || res.status > 299) {
    let why = text.slice(0, 300);
    try {
      const e = JSON.parse(text).error;
      if (e && typeof e.message === "string") why = `${e.code}: ${e.message}`;
    } catch {
      // not the envelope: the text as it is
    }
    throw new Error(`${res.status} ${why}`);
  }
  return text ? JSON.parse(text) : null;
}

// mutantHello tells the coordinator that the running test made emu's world, and adds the
// fault it hands back to the world. It throws when either fails: a mutant never injected
// must not be reported as survived.
async function mutantHello(emu) {
  const base = process.env.HOSTEMU_MUTANT;
  let welcome;
  try {
    welcome = await mutantPost("/world", runningTest());
  } catch (err) {
    throw new Error(`hostemu: this test runs under hostemu mutate, whose coordinator (HOSTEMU_MUTANT=${base}) did not answer the world's hello: ${err.message}`, { cause: err });
  }
  if (!welcome || typeof welcome.world !== "string") {
    throw new Error(`hostemu: hostemu mutate's coordinator answered the world's hello with ${JSON.stringify(welcome)}, not {"world", "fault", "report"}`);
  }
  if (welcome.fault) {
    try {
      await emu.faults.add(welcome.fault);
    } catch (err) {
      throw new Error(`hostemu: the mutant of hostemu mutate (${JSON.stringify(welcome.fault)}) could not be added to the world: ${err.message}`, { cause: err });
    }
  }
  emu._mutant = { world: welcome.world, report: welcome.report === true };
}

// mutantReport posts the world's coverage to the coordinator before close() ends it. A
// failure is a warning: the test has run.
async function mutantReport(emu) {
  const m = emu._mutant;
  if (!m || !m.report || !process.env.HOSTEMU_MUTANT) return;
  emu._mutant = null;
  try {
    const coverage = await emu.coverage();
    await mutantPost("/coverage", { world: m.world, coverage });
  } catch (err) {
    process.stderr.write(`hostemu: the coverage of ${emu.namespace || emu.url} could not be sent to hostemu mutate, which will not know what this test called: ${err.message}\n`);
  }
}

// runningTest is the hello of a world made now: the running test's name as its runner's
// JSON reporter calls it (fullName: the describe blocks and the title, joined by spaces)
// and its file's absolute path; {} when no one test is running (a beforeAll, a module's
// top level, node:test, a concurrent test among others), for the coordinator to decide.
function runningTest() {
  // Vitest: its worker state's current task, set by its runner before each test (and its
  // hooks) and back to the suite after
  const vitest = globalThis.__vitest_worker__;
  if (vitest && typeof vitest === "object") {
    const task = vitest.current;
    if (!task || task.type !== "test" || !task.file || othersRunning(task)) return {};
    const names = [];
    for (let x = task; x && x !== task.file && x.type !== "file"; x = x.suite) names.unshift(x.name);
    return { test: names.join(" "), file: task.file.filepath };
  }
  // Jest: circus's state, whose running test is set from its start to its end (its
  // beforeEach and afterEach hooks included); expect's state knows the file
  const sym = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === "JEST_STATE_SYMBOL");
  const test = sym && globalThis[sym] && globalThis[sym].currentlyRunningTest;
  if (test && !test.concurrent) {
    const names = [];
    for (let x = test; x && x.parent; x = x.parent) names.unshift(x.name); // the root block has no parent
    // expect's state, global even when Jest's globals are not (injectGlobals: false)
    const matchers = globalThis[Symbol.for("$$jest-matchers-object")];
    const file = matchers && matchers.state && matchers.state.testPath;
    if (typeof file === "string" && file) return { test: names.join(" "), file };
  }
  return {};
}

// othersRunning tells whether another test of task's file runs too (concurrent tests):
// Vitest's current task is then the last one started, not necessarily the caller.
function othersRunning(task) {
  if (!task.concurrent) return false;
  const stack = [task.file];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x !== task && x.type === "test" && x.result && x.result.state === "run") return true;
    if (Array.isArray(x.tasks)) stack.push(...x.tasks);
  }
  return false;
}

// collected is the coverage of every world of this process that close() ended (start()'s
// and connect()'s; a shared connect() drives everyone's default world and is not
// counted, as in the Go testkit), added up by mergeCoverage; collectedCoverage reads it.
const collected = { report: null, written: 0, run: null };

// collect adds the world's coverage, as it stands before close() ends it, to collected,
// and, when HOSTEMU_COVERAGE_DIR names a directory, writes it there for the run's other
// processes and workers. It never rejects: a world whose coverage cannot be read (an older
// hostemu, a server already gone) is left out, saying so unless it was never served.
async function collect(emu) {
  if (!countsCoverage(emu)) return;
  let report;
  try {
    report = await emu.coverage();
  } catch (err) {
    const gone = err instanceof HostemuError ? err.status === 404 : err.cause && err.cause.code === "ECONNREFUSED";
    if (!gone) process.stderr.write(`hostemu: the coverage of ${emu.namespace || emu.url} could not be read at close(), so collectedCoverage() leaves it out: ${err.message}\n`);
    return;
  }
  collected.report = collected.report ? mergeCoverage(collected.report, report) : report;
  const dir = process.env.HOSTEMU_COVERAGE_DIR;
  if (!dir) return;
  // one file per world, named after this module instance (a process, or a Vitest
  // thread), written whole and renamed, so that a reader never sees half of one
  if (!collected.run) collected.run = `${process.pid}-${require("node:crypto").randomUUID()}`;
  const file = path.join(dir, `${collected.run}-${++collected.written}.coverage.json`);
  try {
    await fs.promises.mkdir(dir, { recursive: true });
    await fs.promises.writeFile(file + ".tmp", JSON.stringify(report));
    await fs.promises.rename(file + ".tmp", file);
  } catch (err) {
    process.stderr.write(`hostemu: the coverage of ${emu.namespace || emu.url} could not be written to HOSTEMU_COVERAGE_DIR: ${err.message}\n`);
  }
}

// countsCoverage tells whether an emulator's world is its own: start()'s process or
// connect()'s namespace, not a shared connect()'s default world.
function countsCoverage(emu) {
  return !!(emu._r.child || emu._r.namespace);
}

/**
 * The coverage of every world of this run, added up, as the Go testkit's
 * CollectedCoverage: each world that close() ended as it stood just before, every world
 * still open as it stands now and, when HOSTEMU_COVERAGE_DIR names a directory, every
 * world the run's other processes and workers closed (each writes its own there). A
 * shared connect() is not counted.
 */
async function collectedCoverage() {
  const open = [...live].filter((e) => !e._closing && countsCoverage(e));
  // closes under way finish collecting first
  await Promise.allSettled([...live].filter((e) => e._closing).map((e) => e._closing));
  const reports = collected.report ? [collected.report] : [];
  for (const e of open) {
    try {
      reports.push(await e.coverage());
    } catch {
      // closed meanwhile (and collected then), or its server gone
    }
  }
  const dir = process.env.HOSTEMU_COVERAGE_DIR;
  if (dir) {
    let names = [];
    try {
      names = await fs.promises.readdir(dir);
    } catch (err) {
      if (err.code !== "ENOENT") throw err;
    }
    const own = collected.run ? collected.run + "-" : null;
    for (const n of names.sort()) {
      if (!n.endsWith(".coverage.json") || (own && n.startsWith(own))) continue;
      reports.push(JSON.parse(await fs.promises.readFile(path.join(dir, n), "utf8")));
    }
  }
  return mergeCoverage(...reports);
}

// mergeCoverage adds coverage reports up as hostemu does (the Go package coverage's
// Merge, which GET /_emulator/coverage?namespaces=all and testkit.CollectedCoverage use):
// counts of the same operation, answer, edge and fault action are summed, an item only
// one report lists is kept, and the totals are computed again.
function mergeCoverage(...reports) {
  const out = { operations: [], transitions: [], faults: [], totals: null };
  let other = 0;
  const opAt = new Map();
  const trAt = new Map();
  const fAt = new Map();
  for (const r of reports) {
    other += r.other_undocumented || 0;
    for (const o of r.operations || []) {
      const k = o.method + " " + o.path;
      let dst = opAt.get(k);
      if (!dst) {
        dst = { method: o.method, path: o.path, seen: 0, responses: [] };
        opAt.set(k, dst);
        out.operations.push(dst);
      }
      dst.seen += o.seen;
      if (!dst.ignored && o.ignored) dst.ignored = o.ignored;
      for (const a of o.responses || []) {
        let b = dst.responses.find((x) => x.status === a.status && (x.code || "") === (a.code || "") && !!x.undocumented === !!a.undocumented);
        if (!b) {
          b = { ...a, seen: 0 };
          dst.responses.push(b);
        }
        b.seen += a.seen;
        if (!b.ignored && a.ignored) b.ignored = a.ignored;
      }
    }
    for (const t of r.transitions || []) {
      const k = [t.resource, t.from, t.to, t.via || ""].join(" ");
      let dst = trAt.get(k);
      if (!dst) {
        dst = { ...t, seen: 0 };
        trAt.set(k, dst);
        out.transitions.push(dst);
      }
      dst.seen += t.seen;
      if (!dst.ignored && t.ignored) dst.ignored = t.ignored;
    }
    for (const f of r.faults || []) {
      let dst = fAt.get(f.action);
      if (!dst) {
        dst = { action: f.action, seen: 0 };
        fAt.set(f.action, dst);
        out.faults.push(dst);
      }
      dst.seen += f.seen;
    }
  }
  out.totals = coverageTotals(out);
  if (other > 0) out.other_undocumented = other;
  return out;
}

// coverageTotals computes a report's totals from its lists, as hostemu does: an
// undocumented answer is not counted, nor an ignored row (counted in ignored); percents
// have one decimal, rounded down.
function coverageTotals(r) {
  let ops = 0, opsSeen = 0, resp = 0, respSeen = 0, trans = 0, transSeen = 0, ignored = 0;
  for (const o of r.operations) {
    if (o.ignored) ignored++;
    else {
      ops++;
      if (o.seen > 0) opsSeen++;
    }
    for (const a of o.responses) {
      if (a.undocumented) continue;
      if (a.ignored) { ignored++; continue; }
      resp++;
      if (a.seen > 0) respSeen++;
    }
  }
  for (const t of r.transitions) {
    if (t.ignored) { ignored++; continue; }
    trans++;
    if (t.seen > 0) transSeen++;
  }
  const pct = (seen, total) => (total === 0 ? 100 : Math.floor((seen * 1000) / total) / 10);
  const tally = (seen, total) => ({ seen, total, percent: pct(seen, total) });
  return {
    operations: tally(opsSeen, ops),
    responses: tally(respSeen, resp),
    transitions: tally(transSeen, trans),
    percent: pct(opsSeen + respSeen + transSeen, ops + resp + trans),
    ...(ignored > 0 ? { ignored } : {}),
  };
}

// writeArtifact writes a bundle as $HOSTEMU_ARTIFACTS/<name>.hostemu.tgz and prints
// where, with the command that opens it.
async function writeArtifact(name, bytes) {
  const file = path.resolve(process.env.HOSTEMU_ARTIFACTS || "hostemu-artifacts", artifactName(name));
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  await fs.promises.writeFile(file, bytes, { mode: 0o600 });
  process.stderr.write(`hostemu: this test's world is saved in ${file}; open it where it stood with:\n\tnpx hostemu replay ${JSON.stringify(file)}\n`);
  return file;
}

// watching: whether saveBundlesOnFailure is on; epoch, how many tests' afterEach have
// run (an emulator made since the last one is the running test's); and the bundles of
// the running test's emulators it closed (close() keeps one: the world is gone after).
const watching = { on: false, epoch: 0, closed: [], done: new WeakMap(), warned: false };

/**
 * Saves the world of a failed test, as the Go testkit does: registers an afterEach hook
 * with the test runner that, when the test failed, writes the bundle of every emulator
 * still open and of every one closed during the test, as
 * $HOSTEMU_ARTIFACTS/<test name>.hostemu.tgz (-2, -3… after the first), and prints each
 * path with its replay command. A passing test writes nothing. Call it once at the top
 * of a test file (or in a setup file) with the runner's afterEach: node:test's or
 * Vitest's, or, without it, the global one (Jest, Vitest with globals).
 */
function saveBundlesOnFailure(hooks) {
  const afterEach = (hooks && hooks.afterEach) || globalThis.afterEach;
  if (typeof afterEach !== "function") {
    throw new TypeError("saveBundlesOnFailure needs the test runner's afterEach: saveBundlesOnFailure({ afterEach }) with afterEach from node:test or vitest (Jest's is global)");
  }
  // Under hostemu mutate a failure is what a mutant is for: no bundles, and none kept at
  // each close() for them (as the pytest plugin).
  if (process.env.HOSTEMU_MUTANT) return;
  watching.on = true;
  // each call registers (a runner sharing this module between files has a hook per
  // file to run); afterTest does each test once however many there are.
  // No declared parameter: Jest would take one for a done callback.
  afterEach(function hostemuSaveBundlesOnFailure(...args) {
    return afterTest(args[0]);
  });
}

async function afterTest(ctx) {
  // Vitest's task or node:test's context, and which attempt (Vitest retries); Jest gives
  // none, but has one module, so one hook, per file
  const key = ctx && typeof ctx === "object" ? ctx.task || ctx : null;
  if (key) {
    const attempt = (ctx.task && ctx.task.result && ctx.task.result.retryCount) || 0;
    if (watching.done.get(key) === attempt) return;
    watching.done.set(key, attempt);
  }
  const closed = watching.closed;
  watching.closed = [];
  watching.epoch++;
  const t = testOutcome(ctx);
  if (!t.failed) return;
  const failure = failureText(t);
  const kept = (await Promise.all(closed)).filter((bytes) => bytes !== null);
  const worlds = [...kept, ...[...live].filter((e) => !e._closing)];
  for (let i = 0; i < worlds.length; i++) {
    const name = i === 0 ? t.name : `${t.name}-${i + 1}`;
    try {
      // a live world's bundle comes with failure.txt from hostemu; one closed during the
      // test was kept before anyone knew it failed: failure.txt is added here
      await writeArtifact(name, worlds[i] instanceof Emulator ? await bundleWithFailure(worlds[i], failure) : withFailureMember(worlds[i], failure));
    } catch (err) {
      process.stderr.write(`hostemu: the world of the failed test ${JSON.stringify(t.name)} could not be saved: ${err.message}\n`);
    }
  }
}

// testOutcome tells whether the test an afterEach hook runs for failed, its name, its
// runner, and the errors it failed with (errors: [] when the runner tells none):
// Vitest hands the hook its context (task.result.errors), node:test its TestContext
// (passed, and error where this Node has it), and Jest nothing, its circus state saying
// what the running test threw.
function testOutcome(ctx) {
  if (ctx && ctx.task && typeof ctx.task === "object") {
    const task = ctx.task;
    const names = [];
    for (let x = task; x && x.name && x.type !== "file"; x = x.suite) names.unshift(x.name);
    // a failed attempt that Vitest retries is not the test failing
    const last = !task.retry || !task.result || (task.result.retryCount || 0) >= task.retry;
    const errors = (task.result && Array.isArray(task.result.errors) && task.result.errors) || [];
    return { failed: !!(task.result && task.result.state === "fail") && last, name: names.join(" "), runner: "Vitest", errors };
  }
  if (ctx && typeof ctx.passed === "boolean") {
    // node:test wraps what the test threw: ERR_TEST_FAILURE, its cause the assertion
    const e = ctx.error;
    const errors = e ? [e.code === "ERR_TEST_FAILURE" && e.cause ? e.cause : e] : [];
    return { failed: !ctx.passed, name: ctx.fullName || ctx.name, runner: "node:test", errors };
  }
  if (ctx && typeof ctx.diagnostic === "function" && !watching.warned) {
    watching.warned = true; // node:test before 20.12 / 21.7: no TestContext.passed
    process.stderr.write("hostemu: saveBundlesOnFailure cannot tell a failed test under this Node (node:test's TestContext.passed came in Node 20.12 and 21.7): no bundle will be written\n");
  }
  const sym = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === "JEST_STATE_SYMBOL");
  const test = sym && globalThis[sym] && globalThis[sym].currentlyRunningTest;
  if (test) {
    const state = typeof expect === "function" && typeof expect.getState === "function" ? expect.getState() : {};
    const errors = Array.isArray(test.errors) ? test.errors : [];
    return { failed: errors.length > 0, name: state.currentTestName || test.name, runner: "Jest", errors };
  }
  return { failed: false, name: "" };
}

// maxFailureBytes bounds failure.txt below hostemu's bound (64 KiB of UTF-8).
const maxFailureBytes = 60 << 10;

// failureText is failure.txt for a failed test: its name, then each error's message
// and stack as the runner gave them, colours removed, at most maxFailureBytes.
function failureText(t) {
  const parts = t.errors.map(errorText).filter((x) => x);
  let text = parts.length > 0
    ? `${t.name} failed:\n\n${parts.join("\n\n")}\n`
    : `${t.name} failed; ${t.runner || "the test runner"} gave saveBundlesOnFailure no message: the test's output holds it.\n`;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length > maxFailureBytes) text = bytes.subarray(0, maxFailureBytes).toString("utf8").replace(/\uFFFD$/, "") + "\n… (cut)\n";
  return text;
}

// errorText is one error as failure.txt tells it: its stack when that holds its message
// (V8's "Name: message\n    at …"), else the message and then the stack; a diff when the
// runner made one (Vitest). Jest's circus keeps [error, asyncError] pairs.
function errorText(err) {
  if (Array.isArray(err)) err = err[0];
  if (err === undefined || err === null) return "";
  if (typeof err !== "object") return stripAnsi(String(err));
  const msg = err.message === undefined ? String(err) : String(err.message);
  const stack = typeof err.stack === "string" ? err.stack : "";
  let text = stack && stack.includes(msg) ? stack : stack ? `${msg}\n${stack}` : msg;
  if (typeof err.diff === "string" && err.diff && !text.includes(err.diff)) text += `\n\n${err.diff}`;
  return stripAnsi(text);
}

function stripAnsi(s) {
  return s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
}

// bundleWithFailure is a live world's bundle with failure.txt (POST /_emulator/bundle);
// a hostemu from before that route gives GET's, and failure.txt is added here.
async function bundleWithFailure(emu, failure) {
  try {
    return await emu._r.call("POST", "/_emulator/bundle", { failure }, { raw: true });
  } catch (err) {
    const old = err instanceof HostemuError && (err.status === 405 || (err.status === 404 && err.code === "not_found"));
    if (!old) throw err;
    return withFailureMember(await emu.bundle(), failure);
  }
}

// withFailureMember adds failure.txt to a bundle's bytes (a gzipped tar): the tar is
// read to its end-of-archive blocks, the member appended before them, and the whole
// compressed again. A bundle is a few gzip members; gunzip reads them as one.
function withFailureMember(bytes, failure) {
  const tar = zlib.gunzipSync(bytes);
  let end = 0;
  while (end + 512 <= tar.length) {
    const h = tar.subarray(end, end + 512);
    if (h.every((b) => b === 0)) break;
    end += 512 + Math.ceil(tarSize(h) / 512) * 512;
  }
  const data = Buffer.from(failure, "utf8");
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return zlib.gzipSync(Buffer.concat([tar.subarray(0, end), tarHeader("failure.txt", data.length), data, pad, Buffer.alloc(1024)]));
}

// tarSize reads a tar header's size: octal, or base-256 when its first byte says so.
function tarSize(h) {
  const f = h.subarray(124, 136);
  if (f[0] & 0x80) {
    let n = f[0] & 0x7f;
    for (let i = 1; i < f.length; i++) n = n * 256 + f[i];
    return n;
  }
  return parseInt(f.toString("latin1").replace(/[\0 ].*$/s, "").trim() || "0", 8);
}

// tarHeader is a ustar header of a regular file of size bytes, written now.
function tarHeader(name, size) {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, "utf8");
  h.write("0000644\0", 100);
  h.write("0000000\0", 108);
  h.write("0000000\0", 116);
  h.write(size.toString(8).padStart(11, "0") + "\0", 124);
  h.write(Math.floor(Date.now() / 1000).toString(8).padStart(11, "0") + "\0", 136);
  h.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  h.write("0", 156);
  h.write("ustar\0", 257);
  h.write("00", 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  return h;
}

// artifactName is a test's bundle file name, its name made safe for every file system,
// as the Go testkit makes it.
function artifactName(test) {
  const s = String(test).replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[_.]+|[_.]+$/g, "").slice(0, 180);
  return (s || "test") + ".hostemu.tgz";
}

// credentials are the first token of each scope and the first decryption key of the
// world, as the banner shows them.
async function credentials(r) {
  const c = await r.call("GET", "/_emulator/tokens");
  const first = (scope) => (c.tokens.find((t) => t.scope === scope) || { token: "" }).token;
  return { tokens: { read: first("read"), deploy: first("deploy"), admin: first("admin") }, cipherKey: c.cipher_api_keys[0] || "" };
}

// startArgs are the serve flags for options: a free loopback port, a manual clock at
// defaultClockStart, seed 1, a CA in memory, and no HTTPS listener unless asked.
function startArgs(o) {
  const args = ["serve", "--addr", "127.0.0.1:0", "--log-format", "json", "--ca-dir", ":memory:", "--seed", String(o.seed === undefined ? 1 : o.seed)];
  const clock = o.clock || "manual";
  args.push("--clock", clock);
  if (o.clockStart !== undefined) args.push("--clock-start", rfc3339(o.clockStart));
  else if (clock === "manual" || clock === "auto") args.push("--clock-start", defaultClockStart);
  args.push("--tls-addr", o.tls ? "127.0.0.1:0" : "");
  if (o.scenario) args.push("--scenario", o.scenario);
  if (o.scenariosDir) args.push("--scenarios", o.scenariosDir);
  if (o.fixtures) args.push("--fixtures", o.fixtures);
  if (o.controlToken) args.push("--control-token", o.controlToken);
  if (o.args) args.push(...o.args);
  return args;
}

// childEnv is this process's environment without HOSTEMU_* variables, which would shape
// the emulator behind the options' back, plus options.env.
function childEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("HOSTEMU_")) env[k] = v;
  }
  return { ...env, ...extra };
}

/** Starts hostemu in a process of its own on 127.0.0.1, on a free port; resolves once it is healthy. */
async function start(options) {
  const o = options || {};
  const bin = o.binary || binaryPath();
  // Its standard input is a pipe only this process holds (HOSTEMU_WATCH_STDIN): should
  // this process die without its exit hook running (SIGKILL, a runner's timeout), the
  // kernel closes the pipe and hostemu stops within a second, its port free again.
  const child = spawn(bin, startArgs(o), { stdio: ["pipe", "pipe", "pipe"], env: childEnv({ HOSTEMU_WATCH_STDIN: "1", ...o.env }), windowsHide: true });
  child.stdin.on("error", () => {}); // nothing is written; the binary may be gone first
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const listening = await waitListening(child, o, bin);
  const r = new Remote(listening.url, o.controlToken);
  r.child = child;
  r.exited = exited;
  let emu;
  try {
    await health(r);
    emu = new Emulator(r, await credentials(r), { cipherUrl: listening.cipher_url, tlsUrl: listening.tls_url });
  } catch (err) {
    r.kill();
    throw err;
  }
  track(emu);
  if (process.env.HOSTEMU_MUTANT) {
    try {
      await mutantHello(emu);
    } catch (err) {
      live.delete(emu);
      r.kill();
      throw err;
    }
  }
  // The process and its pipes must not keep this one alive: a test runner whose test
  // forgot close() still ends, and its exit hook stops the emulator.
  child.unref();
  child.stdin.unref();
  child.stdout.unref();
  child.stderr.unref();
  return emu;
}

// waitListening reads the binary's JSON log until its "listening" record, which names
// the addresses it bound; it rejects with the log if the binary stops or never listens.
function waitListening(child, o, bin) {
  const log = typeof o.log === "function" ? o.log : o.log ? (line) => process.stderr.write(line + "\n") : null;
  const tail = [];
  let buf = "";
  return new Promise((resolve, reject) => {
    let done = false;
    const fail = (why) => {
      if (done) return;
      done = true;
      clearTimer(t);
      if (child.exitCode === null) child.kill("SIGKILL");
      reject(new Error(`hostemu: start(): ${why}${tail.length ? "\n" + tail.join("\n") : ""}`));
    };
    const t = timer(() => fail(`${bin} did not listen within ${o.startTimeout || startTimeout} ms`), o.startTimeout || startTimeout);
    child.stdout.resume(); // the banner: drained, not needed
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (log) log(line);
        if (done) continue;
        tail.push(line);
        if (tail.length > 40) tail.shift();
        let rec;
        try {
          rec = JSON.parse(line);
        } catch {
          continue;
        }
        if (rec && rec.msg === "listening" && typeof rec.url === "string") {
          done = true;
          clearTimer(t);
          resolve(rec);
        }
      }
    });
    child.once("error", (err) => fail(`cannot run ${bin}: ${err.message}`));
    child.once("exit", (code, signal) => fail(`${bin} stopped (${signal || "exit code " + code}) before listening`));
  });
}

// health polls GET /_emulator/health until it answers 200 {"status":"ok"}: a service
// container may still be starting, and there is nothing to wait on but the answer.
async function health(r, limitMs) {
  const deadline = Date.now() + (limitMs || healthTimeout);
  for (;;) {
    let why;
    try {
      const res = await r.send("GET", "/_emulator/health", undefined, 2_000);
      let ok = false;
      try {
        ok = res.status === 200 && JSON.parse(res.body.toString("utf8")).status === "ok";
      } catch {
        ok = false;
      }
      if (ok) return;
      why = `it answered ${res.status}, not 200 {"status":"ok"}`;
    } catch (err) {
      why = err.message;
    }
    if (Date.now() > deadline) {
      throw new Error(`hostemu: no hostemu answers at ${r.url}/_emulator/health within ${limitMs || healthTimeout} ms: ${why} (is it running, and is the URL the hosting service's base URL?)`);
    }
    await sleep(50);
  }
}

// namespaceSpec is the POST /_emulator/namespaces body for connect()'s options: a manual
// clock at defaultClockStart unless told.
function namespaceSpec(o) {
  const body = { clock: o.clock || "manual" };
  if (o.clockStart !== undefined) body.clock_start = rfc3339(o.clockStart);
  else if (body.clock === "manual" || body.clock === "auto") body.clock_start = defaultClockStart;
  if (o.seed !== undefined) body.seed = o.seed;
  if (o.scenario) body.scenario = o.scenario;
  if (o.scenarios !== undefined) {
    if (!Array.isArray(o.scenarios) || o.scenarios.some((s) => typeof s !== "string")) {
      throw new Error("hostemu: connect()'s scenarios are scenario documents, as YAML strings");
    }
    body.scenarios = o.scenarios;
  }
  if (o.fixtures !== undefined) {
    if (typeof o.fixtures === "string") {
      if (!/\.json$/i.test(o.fixtures)) {
        throw new Error(`hostemu: connect() takes fixtures as an object or a .json file (${o.fixtures}): the testkit has no YAML parser; convert it, or start() hostemu with it`);
      }
      body.fixtures = JSON.parse(fs.readFileSync(o.fixtures, "utf8"));
    } else {
      body.fixtures = o.fixtures;
    }
  }
  return body;
}

/** Drives the hostemu running at url (its base URL, without /v1) in a namespace of its own, deleted by close(). */
async function connect(url, options) {
  const o = options || {};
  if (typeof url !== "string" || !/^https?:\/\//.test(url)) throw new TypeError(`hostemu: connect() takes the hosting service's base URL, e.g. http://127.0.0.1:4700, got ${JSON.stringify(url)}`);
  const base = url.replace(/\/+$/, "").replace(/\/v1$/, "");
  if (o.shared) {
    for (const k of ["seed", "clock", "clockStart", "fixtures"]) {
      if (o[k] !== undefined) throw new Error(`hostemu: connect(): ${k} does not apply with shared: the default namespace was configured when hostemu started`);
    }
  }
  const r = new Remote(base, o.controlToken);
  await health(r, o.healthTimeout);
  if (o.shared) {
    // A control call now, so that a wrong or missing control token fails here, clearly.
    const emu = new Emulator(r, await credentials(r), { cipherUrl: o.cipherUrl });
    if (o.scenario) await emu.useScenario(o.scenario);
    return emu;
  }
  const ns = await r.call("POST", "/_emulator/namespaces", namespaceSpec(o));
  r.namespace = ns.namespace;
  const emu = new Emulator(r, { tokens: ns.tokens, cipherKey: ns.cipher_key }, { cipherUrl: o.cipherUrl });
  track(emu);
  if (process.env.HOSTEMU_MUTANT) {
    try {
      await mutantHello(emu);
    } catch (err) {
      emu._mutant = null; // no coverage to report for a world the test never got
      await emu.close().catch(() => {});
      throw err;
    }
  }
  return emu;
}

module.exports = { start, connect, saveBundlesOnFailure, collectedCoverage, HostemuError, defaultClockStart };
