// hostemu mutate under Vitest: the mutants of projectCount's call survive (it swallows
// them and the test looks at nothing they change), createDeployment's are killed.
import { describe, expect, test } from "vitest";
import { start } from "hostemu/testkit";
import { createDeployment, projectCount } from "../client.cjs";

describe("client", () => {
  test("counts projects", async ({ onTestFinished }) => {
    const emu = await start();
    onTestFinished(() => emu.close());
    expect(await projectCount(emu.url, emu.tokens.read)).toBeGreaterThanOrEqual(0);
  });

  test("creates a deployment", async ({ onTestFinished }) => {
    expect(process.env.MUTATE_FAIL, "MUTATE_FAIL is set: the baseline fails").toBeUndefined();
    const emu = await start();
    onTestFinished(() => emu.close());
    expect(await createDeployment(emu.url, emu.tokens.deploy, "prj_demo")).toMatch(/^dpl_/);
  });
});
