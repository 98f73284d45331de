#!/usr/bin/env bash
# ctest browser_dapp_and_status_page: installs the test's npm packages (pinned by
# package-lock.json; npm's cache in the build tree, as scripts/test.sh keeps it) and runs
# browser.test.js in Debian's headless Chromium (scripts/deps.sh --browser installs it).
#   run.sh BARREL_NODE BARREL_LOAD OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
node_bin=$1 load_bin=$2 out_dir=$3
chromium=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $chromium ]]; then
    echo "error: no Chromium at $chromium (scripts/deps.sh --browser installs Debian's)" >&2
    exit 1
fi
cache="$(cd "$here/../.." && pwd)/build/npm-cache"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error --prefer-offline --cache "$cache")
cd "$here"
BARREL_NODE=$node_bin BARREL_LOAD=$load_bin CHROMIUM=$chromium OUT_DIR=$out_dir \
    exec node --test --test-reporter=spec browser.test.js
