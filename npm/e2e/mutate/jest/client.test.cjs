// hostemu mutate under Jest: the mutants of projectCount's call survive (it swallows
// them and the test looks at nothing they change), createDeployment's are killed.
const { start } = require("hostemu/testkit");
const { createDeployment, projectCount } = require("../client.cjs");

describe("client", () => {
  let emu;
  beforeEach(async () => {
    emu = await start();
  });
  afterEach(() => emu.close());

  test("counts projects", async () => {
    expect(await projectCount(emu.url, emu.tokens.read)).toBeGreaterThanOrEqual(0);
  });

  test("creates a deployment", async () => {
    if (process.env.MUTATE_FAIL) throw new Error("MUTATE_FAIL is set: the baseline fails");
    expect(await createDeployment(emu.url, emu.tokens.deploy, "prj_demo")).toMatch(/^dpl_/);
  });
});
