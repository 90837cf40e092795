#!/usr/bin/env bash
# Installs Debian's Chromium for the console's browser tests, if it is not there yet.
# Used by .ci/run; on a developer machine run it once (needs root or sudo).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  chromium --version
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium >/dev/null
chromium --version
