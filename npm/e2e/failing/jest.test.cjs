// saveBundlesOnFailure under Jest (its afterEach is global): see node.test.mjs.
const { saveBundlesOnFailure, start } = require("hostemu/testkit");
const deploy = require("./deploy.cjs");

saveBundlesOnFailure();

describe("bundles", () => {
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
      expect((await emu.await({ deployment: id, status: "ready" })).status).toBe("error"); // it is ready
    } finally {
      await emu.close();
    }
  });
});
