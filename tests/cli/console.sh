#!/usr/bin/env bash
# The web console in a real browser: tests/console/console_test.mjs (node,
# puppeteer-core and Debian's chromium; it skips without them).  Prints TAP.
cd "$(dirname "$0")/../.." || exit 2
command -v node >/dev/null || { echo "1..0 # SKIP node is not installed"; exit 0; }
exec node tests/console/console_test.mjs
