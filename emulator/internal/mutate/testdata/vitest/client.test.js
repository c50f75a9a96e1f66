import { describe, expect, test } from "vitest";
test("lists projects", () => { expect(1).toBe(1); });
describe("deploy", () => {
  describe("when the API is down (503)", () => {
    test("retries [twice]", () => { console.log("retrying"); expect("ready").toBe("error"); });
    test.skip("gives up", () => {});
    test.todo("backs off");
  });
  test("promotes", () => { console.log("promoted dpl_1"); console.error("a warning"); });
});
