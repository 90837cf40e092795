#!/usr/bin/env bash
# Installs the bench's load generators from Debian for `npm run bench`, those not there yet:
# wrk, which can drive the uWS targets (autocannon tops out near 45k req/s here), and h2load
# (nghttp2-client), which drives the HTTP/2 targets. Without wrk the bench runs on autocannon,
# without h2load it leaves the HTTP/2 targets out, and says so. Needs root or sudo.
set -uo pipefail
missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else SUDO="unavailable"; fi
fi
if [ "$SUDO" = "unavailable" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "bench: ${missing[*]} not installed and cannot be installed here (needs apt-get and root); wrk's targets use autocannon, h2load's are left out" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
  echo "bench: installing ${missing[*]} failed; wrk's targets use autocannon, h2load's are left out" >&2
fi
exit 0
