// A small Mocha suite in the shape of highlight.js's and Lighthouse's:
// nested describe blocks, passing, failing, slow and pending tests.
const assert = require("assert");

describe("markup", function () {
  it("escapes angle brackets", function () {
    assert.strictEqual("<b>".replace(/</g, "&lt;"), "&lt;b>");
  });
  it("keeps entities", function () {
    assert.strictEqual("&amp;", "&amp;");
  });
  describe("nested attributes", function () {
    it("reads quoted values", function () {
      assert.deepStrictEqual('a="1"'.split("="), ["a", '"1"']);
    });
    it("rejects unquoted values", function () {
      assert.strictEqual("a=1".includes('"'), true, "expected a quote");
    });
  });
  it("waits for slow highlighting", function (done) {
    setTimeout(done, 120);
  });
  it.skip("handles templates later", function () {});
});

describe("languages", function () {
  it("detects javascript", function () {
    assert.ok("const x = 1".startsWith("const"));
  });
  it("throws on unknown grammar", function () {
    throw new TypeError("Unknown language: klingon");
  });
});
