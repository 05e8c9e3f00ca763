#!/usr/bin/env bash
# Headless Chromium for the run viewer's browser tests (tests/test_view_browser.py) and its
# first-paint benchmark. Debian's package only: nothing downloads a browser build at test time.
# Idempotent and instant when the binary is present.
set -euo pipefail

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v chromium >/dev/null 2>&1; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
echo "chromium ready: $(chromium --version 2>/dev/null || echo "$(command -v chromium)")"
