import { describe, test } from "node:test";
import assert from "node:assert/strict";
test("lists projects", () => {});
describe("deploy", () => {
  describe("when the API is down (503)", () => {
    test("retries [twice]", () => { console.log("retrying"); assert.equal("ready", "error"); });
    test.skip("gives up", () => {});
    test.todo("backs off");
  });
  test("promotes", () => {});
});
test("with subtests", async (t) => { await t.test("first", () => {}); await t.test("second", () => { throw new Error("second failed"); }); });
