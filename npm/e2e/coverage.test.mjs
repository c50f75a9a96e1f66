// collectedCoverage(): the coverage of every start()/connect() world of a run, added up
// as the Go testkit's CollectedCoverage() adds them: worlds closed in this process (as
// they stood before close()), worlds still open, and with HOSTEMU_COVERAGE_DIR the worlds
// other processes of the run closed. A shared connect() is not counted.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start, connect, collectedCoverage } from "hostemu/testkit";

const auth = (token) => ({ authorization: `Bearer ${token}` });

// seen is how often coverage saw the operation (method path) answer status.
function seen(cov, method, path, status) {
  const op = cov.operations.find((o) => o.method === method && o.path === path);
  assert.ok(op, `no operation ${method} ${path} in the coverage`);
  if (status === undefined) return op.seen;
  return op.responses.filter((r) => r.status === status && !r.undocumented).reduce((n, r) => n + r.seen, 0);
}

// totals are a report's totals computed from its lists, as hostemu computes them.
function totals(cov) {
  const pct = (s, t) => (t === 0 ? 100 : Math.floor((s * 1000) / t) / 10);
  let ops = 0, opsSeen = 0, resp = 0, respSeen = 0;
  for (const o of cov.operations) {
    ops++;
    if (o.seen > 0) opsSeen++;
    for (const r of o.responses) if (!r.undocumented) (resp++, r.seen > 0 && respSeen++);
  }
  const trans = cov.transitions.length;
  const transSeen = cov.transitions.filter((t) => t.seen > 0).length;
  return { operations: pct(opsSeen, ops), responses: pct(respSeen, resp), transitions: pct(transSeen, trans), percent: pct(opsSeen + respSeen + transSeen, ops + resp + trans) };
}

test("collectedCoverage adds up this process's worlds, closed and open, a shared one not twice", async () => {
  const before = await collectedCoverage(); // whatever earlier tests of this file left
  const base = (m, p, s) => (before.operations.length ? seen(before, m, p, s) : 0);

  // a start()ed world: one project list, one 401; closed
  const a = await start();
  await fetch(`${a.url}/v1/projects`, { headers: auth(a.tokens.read) });
  await fetch(`${a.url}/v1/projects`);
  // a namespace on it: two project lists and a deployment that becomes ready; closed
  const ns = await connect(a.url);
  await fetch(`${ns.url}/v1/projects`, { headers: auth(ns.tokens.read) });
  await fetch(`${ns.url}/v1/projects`, { headers: auth(ns.tokens.read) });
  const res = await fetch(`${ns.url}/v1/deployments`, {
    method: "POST",
    headers: { ...auth(ns.tokens.deploy), "content-type": "application/json" },
    body: JSON.stringify({ project_id: "prj_demo", files: {} }),
  });
  assert.equal(res.status, 201);
  await ns.await({ deployment: (await res.json()).id, status: "ready" });
  // the shared default world (a's own here): counted once, through a, not again
  const shared = await connect(a.url, { shared: true });
  await fetch(`${shared.url}/v1/projects`, { headers: auth(shared.tokens.read) });
  await shared.close();
  await ns.close();
  await a.close();
  // a world still open: one project list
  const b = await start();
  await fetch(`${b.url}/v1/projects`, { headers: auth(b.tokens.read) });

  const cov = await collectedCoverage();
  assert.equal(seen(cov, "GET", "/v1/projects", 200) - base("GET", "/v1/projects", 200), 5); // a 1 + shared 1 (a's world), ns 2, b 1
  assert.equal(seen(cov, "GET", "/v1/projects", 401) - base("GET", "/v1/projects", 401), 1);
  assert.equal(seen(cov, "POST", "/v1/deployments", 201) - base("POST", "/v1/deployments", 201), 1);
  const built = cov.transitions.find((t) => t.resource === "deployment" && t.from === "building" && t.to === "ready");
  assert.ok(built && built.seen >= 1, "building → ready is not in the collected coverage");
  // the same shape as one world's, totals computed again over the union
  const one = await b.coverage();
  assert.deepEqual(cov.operations.map((o) => `${o.method} ${o.path}`), one.operations.map((o) => `${o.method} ${o.path}`));
  assert.deepEqual(cov.operations.map((o) => o.responses.filter((r) => !r.undocumented).length), one.operations.map((o) => o.responses.length));
  const t = totals(cov);
  assert.deepEqual([cov.totals.operations.percent, cov.totals.responses.percent, cov.totals.transitions.percent, cov.totals.percent], [t.operations, t.responses, t.transitions, t.percent]);
  assert.ok(cov.totals.percent > one.totals.percent, `the union (${cov.totals.percent}%) covers more than one world (${one.totals.percent}%)`);
  await b.close();
  // once closed, b counts as it stood
  assert.equal(seen(await collectedCoverage(), "GET", "/v1/projects", 200), seen(cov, "GET", "/v1/projects", 200));
});

test("with HOSTEMU_COVERAGE_DIR, collectedCoverage adds up the worlds other processes closed", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "hostemu-coverage-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // two test processes of the run, each with a world that lists deployments once
  const script = `import { start } from "hostemu/testkit";
const e = await start();
await fetch(e.url + "/v1/deployments", { headers: { authorization: "Bearer " + e.tokens.read } });
await e.close();`;
  const env = { ...process.env, HOSTEMU_COVERAGE_DIR: dir };
  for (let i = 0; i < 2; i++) {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd(), env, stdio: ["ignore", "inherit", "inherit"] });
    const [code] = await once(child, "exit");
    assert.equal(code, 0);
  }
  assert.equal((await readdir(dir)).filter((n) => n.endsWith(".coverage.json")).length, 2);

  const mine = await collectedCoverage(); // this process's worlds alone
  process.env.HOSTEMU_COVERAGE_DIR = dir;
  t.after(() => delete process.env.HOSTEMU_COVERAGE_DIR);
  const all = await collectedCoverage();
  assert.equal(seen(all, "GET", "/v1/deployments", 200) - seen(mine, "GET", "/v1/deployments", 200), 2);
  // this process's own files are not counted twice
  const e = await start();
  await fetch(`${e.url}/v1/deployments`, { headers: auth(e.tokens.read) });
  await e.close();
  assert.equal((await readdir(dir)).filter((n) => n.endsWith(".coverage.json")).length, 3);
  assert.equal(seen(await collectedCoverage(), "GET", "/v1/deployments", 200) - seen(mine, "GET", "/v1/deployments", 200), 3);
});

test("coverage({ignore}) leaves the rows out of the totals and lists them as ignored", async (t) => {
  const emu = await start();
  t.after(() => emu.close());
  const all = await emu.coverage();
  const ign = await emu.coverage({ ignore: ["internal_error"] });
  assert.equal(ign.totals.ignored, all.operations.length); // every operation's 500
  assert.equal(ign.totals.responses.total, all.totals.responses.total - all.operations.length);
  assert.ok(ign.operations.every((o) => o.responses.some((r) => r.code === "internal_error" && r.ignored)));
});
