// hostemu mutate's side of the testkit (docs/mutate.md, "How the testkits take part"):
// with HOSTEMU_MUTANT set, start() and connect() say hello to the coordinator, arm the
// fault it hands back before the test gets the world, and post the world's coverage at
// close(). A coordinator that does not answer, or a fault the world refuses, fails the
// test: a mutant never injected must not survive. Here a stand-in coordinator records
// what the testkit sends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { once } from "node:events";
import { start, connect, saveBundlesOnFailure } from "hostemu/testkit";

const auth = (token) => ({ authorization: `Bearer ${token}` });

// coordinator is a stand-in for hostemu mutate's: it answers each hello with the next
// of faults (null when none is left) and records the hellos and coverage posts.
async function coordinator(t, faults, status, suffix = "") {
  const seen = { hellos: [], coverage: [] };
  let n = 0;
  const srv = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (status) {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "not_found", message: "no such mutation round (it is over)" } }));
        return;
      }
      const v = JSON.parse(body);
      if (req.method === "POST" && req.url === "/r/round1/world") {
        seen.hellos.push(v);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ world: `w${++n}`, fault: faults.shift() || null, report: true }));
      } else if (req.method === "POST" && req.url === "/r/round1/coverage") {
        seen.coverage.push(v);
        res.writeHead(204).end();
      } else {
        res.writeHead(404).end();
      }
    });
  });
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const before = process.env.HOSTEMU_MUTANT;
  process.env.HOSTEMU_MUTANT = `http://127.0.0.1:${srv.address().port}/r/round1${suffix}`;
  t.after(() => {
    if (before === undefined) delete process.env.HOSTEMU_MUTANT;
    else process.env.HOSTEMU_MUTANT = before;
    srv.close();
  });
  return seen;
}

const listProjects = (emu) => fetch(`${emu.url}/v1/projects`, { headers: auth(emu.tokens.read) });
const unavailable = { match: { operation: "listProjects" }, error: "service_unavailable", times: 1 };

test("start() arms the mutant before the test gets the world, and reports its coverage at close()", async (t) => {
  const seen = await coordinator(t, [unavailable]);
  const emu = await start();
  assert.deepEqual(seen.hellos, [{}], "node:test cannot tell its test: the hello is {}");
  const first = await listProjects(emu);
  assert.equal(first.status, 503);
  assert.equal((await first.json()).error.code, "service_unavailable");
  assert.equal((await listProjects(emu)).status, 200, "the mutant answers the first call only");
  assert.deepEqual(seen.coverage, []);
  await emu.close();
  assert.equal(seen.coverage.length, 1);
  assert.equal(seen.coverage[0].world, "w1");
  const op = seen.coverage[0].coverage.operations.find((o) => o.method === "GET" && o.path === "/v1/projects");
  assert.equal(op.seen, 2);
  await emu.close(); // again: nothing more is posted
  assert.equal(seen.coverage.length, 1);
});

test("a HOSTEMU_MUTANT with a trailing slash reaches the same coordinator, as in Go and Python", async (t) => {
  const seen = await coordinator(t, [], undefined, "/");
  const emu = await start();
  await emu.close();
  assert.equal(seen.hellos.length, 1);
  assert.equal(seen.coverage.length, 1);
});

test("connect() arms the mutant in its own namespace, not in the server's world", async (t) => {
  const server = await start(); // made before the coordinator: no hello
  t.after(() => server.close());
  const seen = await coordinator(t, [{ match: { operation: "listProjects" }, break: "reset", times: 1 }]);
  const emu = await connect(server.url);
  assert.equal(seen.hellos.length, 1);
  await assert.rejects(listProjects(emu), "the reset mutant breaks the namespace's first call");
  assert.equal((await listProjects(server)).status, 200, "the server's own world has no fault");
  await emu.close();
  assert.deepEqual(seen.coverage.map((c) => c.world), ["w1"]);
  // a shared connect() drives everyone's world: it takes no part
  const shared = await connect(server.url, { shared: true });
  await shared.close();
  assert.equal(seen.hellos.length, 1);
});

test("a coordinator that does not answer fails start() and connect(), saying why", async (t) => {
  await coordinator(t, [], 404);
  await assert.rejects(start(), /hostemu mutate, whose coordinator \(HOSTEMU_MUTANT=http:\/\/127\.0\.0\.1:\d+\/r\/round1\) did not answer the world's hello: 404 not_found: no such mutation round/);
  delete process.env.HOSTEMU_MUTANT;
  const server = await start();
  t.after(() => server.close());
  process.env.HOSTEMU_MUTANT = "http://127.0.0.1:1/r/gone";
  await assert.rejects(connect(server.url), /did not answer the world's hello/);
  // the namespace the failed connect() made is gone
  const namespaces = await fetch(`${server.url}/_emulator/namespaces`).then((r) => r.json());
  assert.deepEqual(namespaces.namespaces, []);
});

test("a fault the world refuses fails start(): the mutant is never silently dropped", async (t) => {
  await coordinator(t, [{ match: { operation: "listProjects" }, error: "no_such_code", times: 1 }]);
  await assert.rejects(start(), /the mutant of hostemu mutate .* could not be added to the world: .*no_such_code/);
});

test("under hostemu mutate, saveBundlesOnFailure saves no bundles (a killed mutant is a failure by design)", async (t) => {
  await coordinator(t, []);
  const hooks = [];
  saveBundlesOnFailure({ afterEach: (fn) => hooks.push(fn) });
  assert.equal(hooks.length, 0, "no afterEach hook: no bundle written, none kept at close()");
  assert.throws(() => saveBundlesOnFailure({}), /needs the test runner's afterEach/, "a wrong call is still refused");
});

test("outside a mutation run, nothing is sent", async () => {
  assert.equal(process.env.HOSTEMU_MUTANT, undefined);
  const emu = await start();
  assert.equal((await listProjects(emu)).status, 200);
  await emu.close();
});
