#!/usr/bin/env bash
# Installs the Debian packages the tests need, when they are not there yet:
#  - chromium: the console's browser tests drive it through playwright-core;
#  - iproute2 (`ip`): test/streaming-small-socket-buffers.test.ts brings up loopback in a
#    network namespace of its own.
# Used by .ci/run and `npm test` (pretest); needs root or sudo when something is missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
chromium --version
