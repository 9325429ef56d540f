#!/usr/bin/env bash
# `npm test`: every suite in turn (the server on SQLite and PostgreSQL, its core files through
# PgBouncer, the SDK, the widget, the browser tests), printing how long each part took and, at
# the end, all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
took=()
part() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  took+=("$(printf '%-8s %4d s' "$name" $((SECONDS - t0)))")
  echo "--- $name took $((SECONDS - t0)) s"
}
part server npm test -w apps/server
# The PostgreSQL suite's core files again, through a private PgBouncer in transaction mode.
part pgbouncer npm run test:pgbouncer -w apps/server
part sdk npm test -w packages/sdk
part widget npm test -w packages/widget
part e2e npm run test:e2e
echo "--- npm test, each part:"
printf '  %s\n' "${took[@]}"
