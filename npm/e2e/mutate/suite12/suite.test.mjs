// The twelve-test Vitest suite of hostemu mutate's figure (docs/performance.md), the
// JavaScript twin of emulator/internal/mutate/testdata/gosuite: a small client of every
// hosting operation and the decryption API, and a test per use of it, most of which
// check the errors they meet and two of which do not.
import { createHash } from "node:crypto";
import { expect, test } from "vitest";
import { start } from "hostemu/testkit";

// client calls one emulated service with one credential; do rejects on any answer but
// a 2xx, naming its status.
function client(base, token) {
  async function call(method, path, body, headers) {
    const h = { authorization: `Bearer ${token}`, ...headers };
    let payload;
    if (body instanceof Uint8Array) {
      payload = body;
      h["content-type"] = "application/octet-stream";
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      h["content-type"] = "application/json";
    }
    const res = await fetch(base + path, { method, headers: h, body: payload });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
  return {
    do: call,
    // quietly swallows the error: what the two careless tests call
    async quietly(method, path) {
      try {
        return (await call(method, path)).data.length;
      } catch {
        return 0;
      }
    },
    async upload(content) {
      const hash = createHash("sha256").update(content).digest("hex");
      await call("POST", "/v1/files", content, { "x-file-digest": hash });
      return hash;
    },
  };
}

async function clients({ onTestFinished }) {
  const emu = await start();
  onTestFinished(() => emu.close());
  return { emu, read: client(emu.url, emu.tokens.read), deploy: client(emu.url, emu.tokens.deploy), admin: client(emu.url, emu.tokens.admin) };
}

const create = (deploy) => deploy.do("POST", "/v1/deployments", { project_id: "prj_demo", files: { "index.html": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" } });

test("lists projects", async (ctx) => {
  const { read } = await clients(ctx);
  await read.do("GET", "/v1/projects");
});

// careless: looks at nothing
test("dashboard counts", async (ctx) => {
  const { read } = await clients(ctx);
  await read.quietly("GET", "/v1/projects");
  await read.quietly("GET", "/v1/deployments?project_id=prj_demo");
});

test("creates a deployment", async (ctx) => {
  const { deploy } = await clients(ctx);
  expect((await create(deploy)).status).toBe("queued");
});

test("gets a deployment", async (ctx) => {
  const { read } = await clients(ctx);
  await read.do("GET", "/v1/deployments/dpl_demolaunch");
});

test("promotes", async (ctx) => {
  const { deploy } = await clients(ctx);
  await deploy.do("POST", "/v1/deployments/dpl_demopreview/promote", {});
});

test("uploads", async (ctx) => {
  const { deploy } = await clients(ctx);
  await deploy.upload(new TextEncoder().encode("<h1>hello</h1>"));
});

test("lists domains", async (ctx) => {
  const { read } = await clients(ctx);
  await read.do("GET", "/v1/projects/prj_demo/domains");
});

test("adds a domain", async (ctx) => {
  const { admin } = await clients(ctx);
  await admin.do("POST", "/v1/projects/prj_demo/domains", { hostname: "shop.example.com" });
});

test("deletes a domain", async (ctx) => {
  const { admin } = await clients(ctx);
  await admin.do("DELETE", "/v1/projects/prj_demo/domains/www.demo-shop.test");
});

test("encrypts and decrypts", async (ctx) => {
  const { emu } = await clients(ctx);
  const c = client(emu.cipherUrl, emu.cipherKey);
  const { envelope } = await c.do("POST", "/v1/encrypt", { payload: "hello" });
  expect((await c.do("POST", "/v1/decrypt", { envelope })).payload).toBe("hello");
});

// careless: the logs' error is swallowed
test("reads the logs", async (ctx) => {
  const { read } = await clients(ctx);
  await read.quietly("GET", "/v1/deployments/dpl_demolaunch/logs");
});

test("creates then gets", async (ctx) => {
  const { read, deploy } = await clients(ctx);
  const d = await create(deploy);
  expect((await read.do("GET", `/v1/deployments/${d.id}`)).id).toBe(d.id);
});
