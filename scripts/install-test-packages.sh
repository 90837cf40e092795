#!/usr/bin/env bash
# Installs the Debian packages the tests need, when they are not there yet:
#  - chromium: the console's browser tests drive it through playwright-core;
#  - iproute2 (`ip`): test/streaming-small-socket-buffers.test.ts brings up loopback in a
#    network namespace of its own;
#  - nginx-light: a real nginx upstream in the path-normalisation matrix (test/paths-*.test.ts)
#    and the reverse proxy the HTTP conformance suite compares the gateway with.
#    Debian's package would start a service on port 80; a policy-rc.d that says no keeps it down.
#  - postgresql-15 (initdb, pg_ctl under /usr/lib/postgresql/*/bin): test/readiness.test.ts
#    stops and starts a PostgreSQL server of its own (test/helpers/private-postgres.ts); the
#    same policy-rc.d keeps the package's own cluster from starting.
#  - php-cli: a real PHP upstream (`php -S`) in the query-credential matrix, reading `$_GET`.
# Used by .ci/run and `npm test` (pretest); needs root or sudo when something is missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null && compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql-15)
[ -x /usr/bin/php ] || missing+=(php-cli)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    policy=1
  fi
  $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  if [ -n "$policy" ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
fi
chromium --version
