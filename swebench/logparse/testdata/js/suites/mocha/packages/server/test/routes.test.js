// A package suite in the shape of Cypress's monorepo (packages/*/test).
const assert = require("assert");

describe("lib/routes", function () {
  it("serves the runner", function () {
    assert.ok(true);
  });
  it("rejects bad origins", function () {
    assert.strictEqual("http://evil".startsWith("https"), true);
  });
});
