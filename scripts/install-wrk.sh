#!/usr/bin/env bash
# Installs Debian's wrk for `npm run bench`, if it is not there yet. wrk is the load
# generator that can drive the uWS targets (autocannon tops out near 45k req/s here);
# without it the bench still runs, on autocannon, and says so. Needs root or sudo.
set -uo pipefail
if command -v wrk >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else SUDO="unavailable"; fi
fi
if [ "$SUDO" = "unavailable" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "bench: wrk is not installed and cannot be installed here (needs apt-get and root); using autocannon" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq wrk >/dev/null; }; then
  echo "bench: installing wrk failed; using autocannon" >&2
fi
exit 0
