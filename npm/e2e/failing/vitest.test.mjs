// saveBundlesOnFailure under Vitest: see node.test.mjs. The emulator is closed by
// onTestFinished here, after the hook.
import { afterEach, describe, expect, test } from "vitest";
import { saveBundlesOnFailure, start } from "hostemu/testkit";
import deploy from "./deploy.cjs";

saveBundlesOnFailure({ afterEach });

describe("bundles", () => {
  test("a passing test", async ({ onTestFinished }) => {
    const emu = await start();
    onTestFinished(() => emu.close());
    await deploy(emu);
  });

  test("a failing test", async ({ onTestFinished }) => {
    const emu = await start();
    onTestFinished(() => emu.close());
    const id = await deploy(emu);
    console.log(`deployed ${id}`);
    expect((await emu.await({ deployment: id, status: "ready" })).status).toBe("error"); // it is ready
  });

  // fails once, passes when retried: it passed
  let attempts = 0;
  test("a flaky test", { retry: 1 }, async ({ onTestFinished }) => {
    const emu = await start();
    onTestFinished(() => emu.close());
    await deploy(emu);
    attempts++;
    expect(attempts).toBe(2);
  });
});
