// Prism's tests/run.js runs every language's fixtures; this one runs two.
const assert = require("assert");

describe("Testing language 'css'", function () {
  it("– should pass test case 'css/selector'", function () {
    assert.strictEqual("a > b".split(">").length, 2);
  });
  it("– should pass test case 'css/url'", function () {
    assert.strictEqual("url(a)".slice(0, 4), "uri(");
  });
});

describe("Testing language 'markup'", function () {
  it("– should pass test case 'markup/tag'", function () {
    assert.ok("<a>".startsWith("<"));
  });
});
