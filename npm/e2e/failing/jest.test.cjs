// saveBundlesOnFailure under Jest (its afterEach is global): see node.test.mjs.
const { saveBundlesOnFailure, start } = require("hostemu/testkit");

saveBundlesOnFailure();

async function deploy(emu) {
  const res = await fetch(`${emu.url}/v1/deployments`, {
    method: "POST",
    headers: { authorization: `Bearer ${emu.tokens.deploy}`, "content-type": "application/json" },
    body: JSON.stringify({ project_id: "prj_demo", files: {} }),
  });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}

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
