// saveBundlesOnFailure under node:test. npm/npm_test.go runs this file expecting it to
// fail, and then finds exactly one bundle: the failing test's, whose deployment it holds.
import { afterEach, test } from "node:test";
import assert from "node:assert/strict";
import { saveBundlesOnFailure, start } from "hostemu/testkit";
import deploy from "./deploy.cjs";

saveBundlesOnFailure({ afterEach });

test("a passing test", async () => {
  const emu = await start();
  try {
    await deploy(emu);
  } finally {
    await emu.close();
  }
});

test("a failing test", async () => {
  const emu = await start();
  try {
    const id = await deploy(emu);
    console.log(`deployed ${id}`);
    assert.equal((await emu.await({ deployment: id, status: "ready" })).status, "error"); // it is ready
  } finally {
    await emu.close();
  }
});

// close() not awaited: the world is still this test's, not the next one's
test("a passing test that does not await close", async () => {
  const emu = await start();
  await deploy(emu);
  emu.close();
});

test("a failing test without an emulator", () => {
  assert.fail("no world of its own to save");
});
