// hostemu/testkit from CommonJS: require() gets the same testkit as import.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const testkit = require("hostemu/testkit");

test("require('hostemu/testkit')", async (t) => {
  assert.equal(typeof testkit.start, "function");
  assert.equal(typeof testkit.connect, "function");
  const esm = await import("hostemu/testkit");
  assert.equal(esm.HostemuError, testkit.HostemuError); // one class for both
  const emu = await testkit.start();
  t.after(() => emu.close());
  const res = await fetch(emu.url + "/v1/projects", { headers: { authorization: "Bearer " + emu.tokens.read } });
  assert.equal(res.status, 200);
});
