import { test, expect } from "vitest";
test("lists projects", () => { expect(2).toBe(2); });
test("lists projects", () => { expect(2).toBe(3); });
