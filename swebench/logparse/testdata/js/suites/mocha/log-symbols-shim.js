// Debian bookworm packages log-symbols 5 (an ES module, exported under
// "default") beside Mocha 10, which reads require("log-symbols").success:
// without this preload Mocha prints "undefined" where it prints ✔.
const symbols = require("log-symbols");
if (symbols.default && !symbols.success) Object.assign(symbols, symbols.default);
