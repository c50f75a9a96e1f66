require("./no-such-module");
test("never runs", () => {});
