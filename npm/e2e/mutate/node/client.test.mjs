// hostemu mutate under node:test: the mutants of projectCount's call survive (it
// swallows them and the test looks at nothing they change), createDeployment's are
// killed. node:test's testkit cannot tell its test: mutate runs each test alone.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { start } from "hostemu/testkit";
import { createDeployment, projectCount } from "../client.cjs";

describe("client", () => {
  test("counts projects", async () => {
    const emu = await start();
    try {
      assert.ok((await projectCount(emu.url, emu.tokens.read)) >= 0);
    } finally {
      await emu.close();
    }
  });

  test("creates a deployment", async () => {
    assert.equal(process.env.MUTATE_FAIL, undefined, "MUTATE_FAIL is set: the baseline fails");
    const emu = await start();
    try {
      assert.match(await createDeployment(emu.url, emu.tokens.deploy, "prj_demo"), /^dpl_/);
    } finally {
      await emu.close();
    }
  });
});
