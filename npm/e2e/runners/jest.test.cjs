// hostemu/testkit under Jest (CommonJS, require), tests in parallel (test.concurrent):
// one start() per test, and connect() to a shared hostemu in a namespace per test.
// npm/npm_test.go runs it with jest where Jest can be installed.
const { connect, start } = require("hostemu/testkit");

const auth = (token) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

async function deployAndFail(emu) {
  const res = await fetch(`${emu.url}/v1/deployments`, { method: "POST", headers: auth(emu.tokens.deploy), body: JSON.stringify({ project_id: "prj_demo", files: {} }) });
  expect(res.status).toBe(201);
  const d = await res.json();
  expect((await emu.await({ deployment: d.id, status: "ready" })).status).toBe("ready");
  const fault = await emu.faults.add({ match: { path: "/v1/projects" }, status: 503, times: 1 });
  expect((await fetch(`${emu.url}/v1/projects`, { headers: auth(emu.tokens.read) })).status).toBe(503);
  expect(await emu.faults.hits(fault)).toBe(1);
  expect((await emu.requests({ method: "POST" })).map((e) => e.path)).toEqual(["/v1/deployments"]);
}

describe("start()", () => {
  for (let i = 0; i < 4; i++) {
    test.concurrent(`workflow ${i}`, async () => {
      const emu = await start();
      try {
        await deployAndFail(emu);
      } finally {
        await emu.close();
      }
    });
  }
});

describe("connect()", () => {
  let server;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server.close());
  for (let i = 0; i < 4; i++) {
    test.concurrent(`workflow ${i}`, async () => {
      const emu = await connect(server.url);
      try {
        await deployAndFail(emu);
      } finally {
        await emu.close();
      }
    });
  }
});

test("fake timers do not stall the testkit", async () => {
  jest.useFakeTimers();
  try {
    const emu = await start();
    const ns = await connect(emu.url);
    expect(Date.parse(await ns.advance("1m")) - Date.parse("2026-01-01T00:00:00Z")).toBe(60_000);
    await ns.close();
    await emu.close();
  } finally {
    jest.useRealTimers();
  }
});
