#!/usr/bin/env bash
# Headless Chromium for the run viewer's browser tests (tests/test_view_browser.py) and its
# first-paint benchmark. Debian's package only: nothing downloads a browser build at test time.
# Idempotent and instant when the binary is present.
set -euo pipefail

# shellcheck source=../setup-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../setup-lib.sh"

if ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium
fi
echo "chromium ready: $(chromium --version 2>/dev/null || echo "$(command -v chromium)")"
