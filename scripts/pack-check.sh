#!/usr/bin/env bash
# The published packages as a user gets them:
#
#   scripts/pack-check.sh        # after `npm ci` (which builds every workspace)
#
# `npm pack`s the server (wishlist-service), the SDK (wishlist-service-sdk) and the widget
# (wishlist-service-widget), lints each with publint and the SDK with Are the Types Wrong,
# installs the three tarballs into an empty folder with no workspace around, and there: on an
# older Node the command says which Node it needs; `npx wishlist` finds the package's command,
# and `wishlist serve --demo` answers /readyz, serves the dashboard, the widget and the demo
# from the package, and on SIGTERM exits 0; the SDK imports as ESM and CommonJS (and its React
# entry); a strict TypeScript project that uses it type-checks under node16 and bundler
# resolution. Nothing it starts outlives it, whether it passes or fails.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

step() { echo "pack-check: $*" >&2; }
work=$(mktemp -d /tmp/wishlist-pack-check.XXXXXX)
server_pid=
# Stops the server (SIGTERM: it drains) and waits for it to exit; returns its exit code.
stop_server() {
  [ -n "$server_pid" ] || return 0
  local pid=$server_pid code=0
  server_pid=
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || code=$?
  return "$code"
}
cleanup() {
  stop_server || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/tarballs" "$work/app"
npm pack --silent -w apps/server -w packages/sdk -w packages/widget --pack-destination "$work/tarballs" >/dev/null
ls "$work/tarballs" >&2

# The lints, on the tarballs themselves.
for tarball in "$work"/tarballs/*.tgz; do
  npx --no-install publint run --strict "$tarball"
done
npx --no-install attw "$work"/tarballs/wishlist-service-sdk-*.tgz
step "publint and Are the Types Wrong: no problem"

# A new project: the three packages, React (the SDK's optional peer) and TypeScript.
cd "$work/app"
cat > package.json <<'JSON'
{ "name": "pack-check-consumer", "private": true, "type": "module" }
JSON
react=$(node -p "require('$repo/node_modules/react/package.json').version")
types_react=$(node -p "require('$repo/node_modules/@types/react/package.json').version")
typescript=$(node -p "require('$repo/packages/sdk/node_modules/typescript/package.json').version" 2>/dev/null \
  || node -p "require('$repo/node_modules/typescript/package.json').version")
npm install --no-audit --no-fund --loglevel=error "$work"/tarballs/*.tgz "react@$react" "@types/react@$types_react" "typescript@$typescript"
[ ! -e node_modules/wishlist-service/node_modules/vitest ] && [ ! -e node_modules/vitest ] || { echo "pack-check: dev dependencies were installed" >&2; exit 1; }

# On an older Node (OLD_NODE, or the system's /usr/bin/node when it is one) the installed
# command says which Node it needs and exits 1, with no stack trace.
old_node=${OLD_NODE:-/usr/bin/node}
if [ -x "$old_node" ] && ! "$old_node" --input-type=module -e \
  "import { isSupportedNode } from './node_modules/wishlist-service/dist/cli/node-version.js'; process.exit(isSupportedNode(process.version) ? 0 : 1)"; then
  old_version=$("$old_node" --version)
  said=$(PATH="$(dirname "$old_node"):$PATH" node_modules/.bin/wishlist --help 2>&1) && code=0 || code=$?
  [ "$code" = 1 ] && [ "$said" = "wishlist needs Node.js 22.19+ or 24.11+ (found $old_version)" ] \
    || { echo "pack-check: on Node $old_version the command exited $code and printed: $said" >&2; exit 1; }
  step "on Node $old_version: \"$said\", exit code 1"
fi

# The server from the package: its bin, its dist, its assets. `npx` finds the command; the
# server runs it directly, as this shell's own child: through npx it would be the child of
# npx's `sh -c`, which a `kill` of npx does not reach, and `wait` could not tell when it exits.
usage=$(npx --no-install wishlist --help)
[[ $usage == 'Usage: wishlist <command>'* ]] || { echo "pack-check: npx wishlist --help printed: $usage" >&2; exit 1; }
mkdir data
DATABASE_URL="sqlite:$work/app/data/wishlist.db" PORT=0 HOST=127.0.0.1 node_modules/.bin/wishlist serve --demo >server.log 2>&1 &
server_pid=$!
base=
for _ in $(seq 1 120); do
  base=$(sed -nE 's/^wishlist service listening on (http:[^ ]+).*/\1/p' server.log | head -n1)
  [ -n "$base" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat server.log >&2; exit 1; }
  sleep 0.5
done
[ -n "$base" ] || { cat server.log >&2; echo "pack-check: the server did not start" >&2; exit 1; }
curl -fsS "$base/readyz" >/dev/null
for path in /dashboard /widget.js /demo /v1/openapi.json; do
  curl -fsS -o /dev/null "$base$path" || { echo "pack-check: $path did not answer 200" >&2; exit 1; }
done
version=$(curl -fsS "$base/v1/openapi.json" | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).info.version))')
[ "$version" = "$(node -p "require('./node_modules/wishlist-service/package.json').version")" ] || { echo "pack-check: info.version $version" >&2; exit 1; }
stop_server || { code=$?; cat server.log >&2; echo "pack-check: the server exited with $code after SIGTERM" >&2; exit 1; }
step "wishlist serve --demo: /readyz, /dashboard, /widget.js, /demo and the document (version $version) from the package; exit code 0 on SIGTERM"

# The SDK at run time, and in a strict TypeScript project under both resolutions.
cp "$repo/scripts/pack-check/run.mjs" "$repo/scripts/pack-check/consumer.ts" .
node run.mjs
for resolution in node16:node16 nodenext:nodenext esnext:bundler; do
  module=${resolution%%:*}
  cat > tsconfig.json <<JSON
{
  "compilerOptions": {
    "strict": true, "noUncheckedIndexedAccess": true, "exactOptionalPropertyTypes": true,
    "module": "$module", "moduleResolution": "${resolution##*:}", "target": "es2022",
    "lib": ["es2022", "dom"], "jsx": "react-jsx", "types": [], "skipLibCheck": false, "noEmit": true
  },
  "files": ["consumer.ts"]
}
JSON
  npx --no-install tsc -p tsconfig.json
  step "the SDK type-checks with moduleResolution ${resolution##*:}"
done
step "passed"
