// The installed package's testkit, end to end: npm/npm_test.go installs the tarballs of
// npm/build.sh into an empty project, copies this directory into it and runs
// `node --test` there. Each workflow creates a deployment, awaits it, injects a fault
// and sees it fire, and reads the journal: 8 in parallel with start() (a process each)
// and 8 in parallel with connect() (a namespace each, on one shared process).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start, connect, HostemuError, defaultClockStart } from "hostemu/testkit";

const parallel = 8;
const json = (token) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

async function workflow(emu) {
  const created = await fetch(`${emu.url}/v1/deployments`, {
    method: "POST",
    headers: json(emu.tokens.deploy),
    body: JSON.stringify({ project_id: "prj_demo", files: {} }),
  });
  assert.equal(created.status, 201);
  const d = await created.json();
  assert.equal(d.status, "queued");

  const ready = await emu.await({ deployment: d.id, status: "ready" });
  assert.equal(ready.status, "ready");
  // a manual clock from 2026-01-01T00:00:00Z: the default lifecycle's 6 s build
  assert.equal(Date.parse(ready.now) - Date.parse(defaultClockStart), 6000);

  const fault = await emu.faults.add({ match: { method: "GET", path: "/v1/deployments/*" }, status: 503, times: 1 });
  assert.match(fault, /^flt_/);
  const failed = await fetch(`${emu.url}/v1/deployments/${d.id}`, { headers: json(emu.tokens.read) });
  assert.equal(failed.status, 503);
  assert.equal((await failed.json()).error.code, "service_unavailable");
  const got = await fetch(`${emu.url}/v1/deployments/${d.id}`, { headers: json(emu.tokens.read) });
  assert.equal(got.status, 200);
  assert.equal((await got.json()).status, "ready");
  assert.equal(await emu.faults.hits(fault), 1);

  const journal = await emu.requests({ path: "/v1/deployments*" });
  assert.deepEqual(
    journal.map((e) => [e.method, e.path, e.status]),
    [
      ["POST", "/v1/deployments", 201],
      ["GET", `/v1/deployments/${d.id}`, 503],
      ["GET", `/v1/deployments/${d.id}`, 200],
    ],
  );
  assert.equal((await emu.requests({ status: 503 })).length, 1);
  return d.id;
}

describe("start()", { concurrency: parallel }, () => {
  for (let i = 0; i < parallel; i++) {
    test(`workflow ${i}`, async (t) => {
      const emu = await start();
      t.after(() => emu.close());
      assert.match(emu.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.deepEqual(emu.tokens, { read: "hostemu-read", deploy: "hostemu-deploy", admin: "hostemu-admin" });
      assert.equal(emu.cipherKey, "hostemu-cipher");
      assert.equal(emu.namespace, "");
      assert.equal(emu.tlsUrl, "");
      await workflow(emu);
    });
  }
});

describe("connect()", { concurrency: parallel }, () => {
  let server;
  before(async () => {
    server = await start();
  });
  after(() => server && server.close());

  for (let i = 0; i < parallel; i++) {
    test(`workflow ${i}`, async (t) => {
      const emu = await connect(server.url + "/v1/");
      t.after(() => emu.close());
      assert.equal(emu.url, server.url);
      assert.match(emu.namespace, /^ns_/);
      assert.notEqual(emu.tokens.deploy, "hostemu-deploy");
      const id = await workflow(emu); // the journal holds this namespace's requests alone
      // Another namespace does not see the deployment.
      const other = await fetch(`${server.url}/v1/deployments/${id}`, { headers: json(server.tokens.read) });
      assert.equal(other.status, 404);
    });
  }

  test("close() deletes the namespace: its tokens stop working", async () => {
    const emu = await connect(server.url);
    const before = await fetch(`${server.url}/v1/projects`, { headers: json(emu.tokens.read) });
    assert.equal(before.status, 200);
    await emu.close();
    await emu.close(); // again: nothing
    const afterClose = await fetch(`${server.url}/v1/projects`, { headers: json(emu.tokens.read) });
    assert.equal(afterClose.status, 401);
  });

  test("options shape the namespace", async (t) => {
    const emu = await connect(server.url, { scenario: "failing-builds", clockStart: new Date("2027-03-04T05:06:07Z") });
    t.after(() => emu.close());
    assert.equal(Date.parse(await emu.now()), Date.parse("2027-03-04T05:06:07Z"));
    const res = await fetch(`${emu.url}/v1/deployments`, { method: "POST", headers: json(emu.tokens.deploy), body: JSON.stringify({ project_id: "prj_demo", files: {} }) });
    const d = await res.json();
    assert.equal((await emu.await({ deployment: d.id, status: "error" })).status, "error");
  });

  test("scenarios given inline are the namespace's own", async (t) => {
    const quick = "name: quick\ndescription: builds in a second\ndeployments:\n  lifecycle:\n    - {status: queued}\n    - {status: building, after: 0s}\n    - {status: ready, after: 1s}\n";
    const emu = await connect(server.url, { scenarios: [quick], scenario: "quick" });
    t.after(() => emu.close());
    const res = await fetch(`${emu.url}/v1/deployments`, { method: "POST", headers: json(emu.tokens.deploy), body: JSON.stringify({ project_id: "prj_demo", files: {} }) });
    const d = await res.json();
    await emu.await({ deployment: d.id, status: "ready" });
    assert.equal(Date.parse(await emu.now()), Date.parse("2026-01-01T00:00:01Z"));
    await assert.rejects(connect(server.url, { scenarios: ["name: [" ] }), (err) => err.code === "invalid_request" && /scenarios\[0\]/.test(err.message));
  });

  test("faults.hits and nearMisses on a hostemu from before GET /_emulator/faults/{id} read the listing", async (t) => {
    // a proxy that answers that route as an older hostemu does: 405, the route having DELETE alone
    const proxy = createServer(async (req, res) => {
      if (req.method === "GET" && /^\/_emulator\/(namespaces\/[^/]+\/)?faults\/[^/?]+/.test(req.url)) {
        res.writeHead(405, { allow: "DELETE", "content-type": "application/json; charset=utf-8" });
        res.end(JSON.stringify({ error: { code: "method_not_allowed", message: "GET is not allowed here" } }));
        return;
      }
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      const up = await fetch(server.url + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const out = {};
      up.headers.forEach((v, k) => { if (k !== "content-encoding" && k !== "content-length" && k !== "transfer-encoding") out[k] = v; });
      res.writeHead(up.status, out);
      res.end(Buffer.from(await up.arrayBuffer()));
    });
    await new Promise((ok) => proxy.listen(0, "127.0.0.1", ok));
    t.after(() => new Promise((ok) => proxy.close(ok)));
    const emu = await connect(`http://127.0.0.1:${proxy.address().port}`);
    t.after(() => emu.close());
    const missed = await emu.faults.add({ match: { method: "DELETE", path: "/v1/projects" }, status: 503 });
    const fired = await emu.faults.add({ match: { method: "GET", path: "/v1/projects" }, status: 503 });
    assert.equal((await fetch(`${emu.url}/v1/projects`, { headers: json(emu.tokens.read) })).status, 503);
    assert.equal(await emu.faults.hits(fired), 1);
    assert.equal(await emu.faults.hits(missed), 0);
    assert.deepEqual((await emu.faults.nearMisses(missed)).map((m) => m.method), ["GET"]);
    await emu.faults.remove(missed);
    await assert.rejects(emu.faults.hits(missed), { name: "HostemuError", code: "fault_not_found", status: 404 });
  });

  test("shared drives the default namespace", async () => {
    const emu = await connect(server.url, { shared: true });
    assert.equal(emu.namespace, "");
    assert.equal(emu.tokens.read, "hostemu-read");
    await emu.close();
    await assert.rejects(connect(server.url, { shared: true, seed: 2 }), /seed does not apply with shared/);
  });
});

describe("the control API", () => {
  let emu;
  before(async () => {
    emu = await start();
  });
  after(() => emu.close());

  test("advance takes a duration string or ms", async () => {
    await emu.reset();
    assert.equal(Date.parse(await emu.advance("90s")) - Date.parse(defaultClockStart), 90000);
    assert.equal(Date.parse(await emu.advance(1500)) - Date.parse(defaultClockStart), 91500);
  });

  test("errors are HostemuErrors with the envelope's code", async () => {
    const err = await emu.faults.remove("flt_nope").catch((e) => e);
    assert.ok(err instanceof HostemuError);
    assert.equal(err.status, 404);
    assert.equal(err.code, "fault_not_found");
    assert.match(err.stack, /^HostemuError: DELETE \/_emulator\/faults\/flt_nope: 404 fault_not_found: /);
    await assert.rejects(emu.useScenario("nope"), { name: "HostemuError", code: "scenario_not_found", status: 404 });
    await assert.rejects(emu.await({ deployment: "dpl_nope", status: "ready", timeout: "1m" }), (e) => e instanceof HostemuError && e.status >= 400);
  });

  test("what almost matched: a fault's near_misses, a journal query's, an await's nearMisses", async () => {
    await emu.reset();
    await emu.faults.add({ match: { method: "DELETE", path: "/v1/projects" }, status: 503 });
    assert.equal((await fetch(`${emu.url}/v1/projects`, { headers: json(emu.tokens.read) })).status, 200);
    const [f] = await emu.faults.list();
    assert.deepEqual(f.near_misses, [{ seq: 1, method: "GET", path: "/v1/projects", differs: { method: "GET" } }]);
    assert.deepEqual(await emu.faults.nearMisses(f.id), f.near_misses);
    await assert.rejects(emu.faults.nearMisses("flt_nope"), { name: "HostemuError", code: "fault_not_found" });
    assert.deepEqual(await emu.requestNearMisses({ method: "GET", path: "/v1/project" }), [{ seq: 1, method: "GET", path: "/v1/projects", differs: { path: "/v1/projects" } }]);
    assert.deepEqual(await emu.requestNearMisses({ method: "GET", path: "/v1/projects" }), []);
    const err = await emu.await({ requests: { method: "DELETE", path: "/v1/projects" }, timeout: "10ms" }).catch((e) => e);
    assert.ok(err instanceof HostemuError);
    assert.equal(err.code, "await_timeout");
    assert.deepEqual(err.nearMisses, f.near_misses);
    assert.match(err.stack, /^HostemuError: POST \/_emulator\/await: 408 await_timeout: .*near misses: seq 1 GET \/v1\/projects differs in \{"method":"GET"\}/);
    // hits and nearMisses fetch the one fault (GET /_emulator/faults/{id}), not the listing
    assert.equal(await emu.faults.hits(f.id), 0);
    const gone = await emu.faults.hits("flt_nope").catch((e) => e);
    assert.ok(gone instanceof HostemuError);
    assert.equal(gone.status, 404);
    assert.match(gone.stack, /^HostemuError: GET \/_emulator\/faults\/flt_nope: 404 fault_not_found: /);
    const fired = await emu.faults.add({ match: { method: "GET", path: "/v1/projects" }, status: 503, times: 1 });
    assert.equal((await fetch(`${emu.url}/v1/projects`, { headers: json(emu.tokens.read) })).status, 503);
    assert.equal(await emu.faults.hits(fired), 1);
    assert.deepEqual(await emu.faults.nearMisses(fired), []);
    await emu.faults.remove(fired);
    await assert.rejects(emu.faults.hits(fired), { name: "HostemuError", code: "fault_not_found", status: 404 });
  });

  test("forceStatus, useScenario, state, reset, faults.list and clear, token", async () => {
    await emu.reset();
    const res = await fetch(`${emu.url}/v1/deployments`, { method: "POST", headers: json(emu.tokens.deploy), body: JSON.stringify({ project_id: "prj_demo", files: {} }) });
    const d = await res.json();
    await emu.forceStatus("deployment", d.id, "error", { code: "build_failed", message: "forced" });
    const got = await (await fetch(`${emu.url}/v1/deployments/${d.id}`, { headers: json(emu.tokens.read) })).json();
    assert.equal(got.status, "error");
    assert.equal(got.error.code, "build_failed");
    await assert.rejects(emu.forceStatus("project", "x", "ready"), TypeError);

    await emu.useScenario("failing-builds");
    const res2 = await fetch(`${emu.url}/v1/deployments`, { method: "POST", headers: json(emu.tokens.deploy), body: JSON.stringify({ project_id: "prj_demo", files: {} }) });
    const d2 = await res2.json();
    assert.equal((await emu.await({ deployment: d2.id, status: "error" })).status, "error");

    const state = await emu.state();
    assert.ok(JSON.stringify(state).includes(d2.id));

    await emu.faults.add({ match: { path: "/v1/projects" }, status: 500 });
    await emu.faults.add({ match: { path: "/v1/files" }, delay: "10ms" });
    assert.equal((await emu.faults.list()).filter((f) => f.source === "api").length, 2);
    await emu.faults.clear();
    assert.equal((await emu.faults.list()).filter((f) => f.source === "api").length, 0);

    const minted = await emu.token("admin");
    const ok = await fetch(`${emu.url}/v1/projects`, { headers: json(minted) });
    assert.equal(ok.status, 200);

    await emu.reset();
    assert.equal(Date.parse(await emu.now()), Date.parse(defaultClockStart));
    assert.equal((await emu.requests()).length, 0);
    const gone = await fetch(`${emu.url}/v1/deployments/${d2.id}`, { headers: json(emu.tokens.read) });
    assert.equal(gone.status, 404);
  });

  test("coverage, where the server has it", async (t) => {
    const probe = await fetch(`${emu.url}/_emulator/coverage`);
    if (probe.status === 404 && (await probe.json()).error.code === "not_found") return t.skip("this hostemu has no /_emulator/coverage");
    await emu.resetCoverage();
    const res = await fetch(`${emu.url}/v1/projects`, { headers: json(emu.tokens.read) });
    assert.equal(res.status, 200);
    const c = await emu.coverage();
    const op = c.operations.find((o) => o.method === "GET" && o.path === "/v1/projects");
    assert.equal(op.seen, 1);
    assert.ok(c.totals.percent > 0);
    const ns = await connect(emu.url);
    t.after(() => ns.close());
    assert.equal((await ns.coverage()).totals.operations.seen, 0); // its own world's
    assert.ok((await ns.coverage({ namespaces: "all" })).totals.operations.seen >= 1); // everyone's
  });

  test("bundles, where the server has them", async (t) => {
    const probe = await fetch(`${emu.url}/_emulator/bundle`);
    await probe.arrayBuffer();
    if (probe.status === 404) return t.skip("this hostemu has no /_emulator/bundle");
    await emu.reset();
    const res = await fetch(`${emu.url}/v1/deployments`, { method: "POST", headers: json(emu.tokens.deploy), body: JSON.stringify({ project_id: "prj_demo", files: {} }) });
    const d = await res.json();
    await emu.await({ deployment: d.id, status: "ready" });
    const bytes = await emu.bundle();
    assert.deepEqual([bytes[0], bytes[1]], [0x1f, 0x8b]); // gzip

    const dir = await mkdtemp(join(tmpdir(), "hostemu-bundle-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const file = await emu.bundle(join(dir, "sub", "world.hostemu.tgz"));
    assert.equal(file, join(dir, "sub", "world.hostemu.tgz"));

    // Another world takes it in: the same state (read through the control API: the
    // bundle's tokens are the default world's well-known ones).
    const ns = await connect(emu.url);
    t.after(() => ns.close());
    await ns.loadBundle(file);
    assert.deepEqual(await ns.state(), await emu.state());
    await ns.loadBundle(bytes);

    process.env.HOSTEMU_ARTIFACTS = dir;
    try {
      const saved = await ns.saveBundle("suite > a test: with/odd chars");
      assert.equal(saved, join(dir, "suite_a_test_with_odd_chars.hostemu.tgz"));
    } finally {
      delete process.env.HOSTEMU_ARTIFACTS;
    }
  });
});

describe("start() options", { concurrency: 3 }, () => {
  test("tls, seed, scenario, clock", async (t) => {
    const emu = await start({ tls: true, seed: 7, scenario: "instant", clockStart: "2030-01-01T00:00:00Z" });
    t.after(() => emu.close());
    assert.match(emu.tlsUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(Date.parse(await emu.now()), Date.parse("2030-01-01T00:00:00Z"));
    const health = await (await fetch(`${emu.url}/_emulator/health`)).json();
    assert.equal(health.scenario, "instant");
  });

  test("a control token guards the control API", async (t) => {
    const emu = await start({ controlToken: "sesame" });
    t.after(() => emu.close());
    assert.equal((await fetch(`${emu.url}/_emulator/clock`)).status, 401);
    assert.equal(Date.parse(await emu.now()), Date.parse(defaultClockStart));
  });

  test("a bad flag fails start() with the binary's message", async () => {
    await assert.rejects(start({ args: ["--no-such-flag"] }), /before listening[\s\S]*no-such-flag/);
  });

  test("close() stops the process", async () => {
    const emu = await start();
    await emu.close();
    await emu.close();
    await assert.rejects(fetch(`${emu.url}/_emulator/health`));
  });
});

// deploy uploads a page, deploys it with strict uploads (the edge serves the bytes) and
// waits until it is ready; resolves with the deployment.
async function deploy(emu, page) {
  await emu.useScenario("strict-uploads");
  const digest = createHash("sha256").update(page).digest("hex");
  const up = await fetch(`${emu.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${emu.tokens.deploy}`, "x-file-digest": digest }, body: page });
  assert.equal(up.status, 201);
  const res = await fetch(`${emu.url}/v1/deployments`, { method: "POST", headers: json(emu.tokens.deploy), body: JSON.stringify({ project_id: "prj_demo", files: { "index.html": digest } }) });
  assert.equal(res.status, 201);
  const d = await res.json();
  await emu.await({ deployment: d.id, status: "ready" });
  return d;
}

describe("emu.fetch opens a deployment's url as given", { concurrency: 4 }, () => {
  test("https, start({ tls: true })", async (t) => {
    const emu = await start({ tls: true });
    t.after(() => emu.close());
    const d = await deploy(emu, "<h1>Hello TLS</h1>");
    assert.match(d.url, /^https:\/\/demo-shop-[a-z0-9]+\.hostemu\.localhost:\d+$/);
    const res = await emu.fetch(d.url + "/");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-hostemu-deployment"), d.id);
    assert.equal(await res.text(), "<h1>Hello TLS</h1>");
    await assert.rejects(emu.fetch("https://nobody.invalid/")); // no certificate for it
  });

  test("http, start()", async (t) => {
    const emu = await start();
    t.after(() => emu.close());
    const d = await deploy(emu, "<h1>Hello</h1>");
    assert.match(d.url, /^http:\/\//);
    const res = await emu.fetch(d.url);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "<h1>Hello</h1>");
    const head = await emu.fetch(d.url, { method: "HEAD" });
    assert.equal(head.status, 200);
  });

  test("https through the proxy, connect() to a hostemu with TLS", async (t) => {
    const server = await start({ tls: true });
    const emu = await connect(server.url);
    t.after(async () => {
      await emu.close();
      await server.close();
    });
    const d = await deploy(emu, "<h1>Hello namespace</h1>");
    assert.match(d.url, /^https:/);
    const res = await emu.fetch(d.url);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "<h1>Hello namespace</h1>");
  });
});

// An app with no clock hook polls with sleeps: on an auto or scaled clock its deployment
// gets ready with nobody calling advance(), in a process of its own and in a namespace.
describe("clocks for apps without a hook", () => {
  for (const clock of ["auto", "scaled:1000"]) {
    test(clock, async (t) => {
      const emu = await start({ clock });
      t.after(() => emu.close());
      const ns = await connect(emu.url, { clock });
      t.after(() => ns.close());
      for (const world of [emu, ns]) {
        const created = await fetch(`${world.url}/v1/deployments`, {
          method: "POST", headers: json(world.tokens.deploy), body: JSON.stringify({ project_id: "prj_demo", files: {} }),
        });
        assert.equal(created.status, 201);
        const { id } = await created.json();
        const began = Date.now();
        for (;;) {
          const d = await (await fetch(`${world.url}/v1/deployments/${id}`, { headers: json(world.tokens.read) })).json();
          if (d.status === "ready") break;
          assert.ok(Date.now() - began < 30000, `${clock}: still ${d.status} after 30 s of polling`);
          // the app's own poll interval, longer than the auto clock's idle time (20 ms):
          // an app that polls faster keeps the world busy and the clock waits for it
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    });
  }
});
