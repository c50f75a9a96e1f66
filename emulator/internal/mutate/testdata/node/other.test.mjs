import { test } from "node:test";
test("lists projects", () => { throw new Error("boom"); });
import { describe } from "node:test";
describe("rollback", () => { test("promotes", () => {}); });
