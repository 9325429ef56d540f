#!/usr/bin/env bash
# The container image, built and run as a deployment would run it:
#
#   scripts/container-smoke.sh
#
# makes (or reuses) a Node 24 base image from Debian's packages (scripts/container-base.sh:
# no image registry is needed), builds the Dockerfile on it, starts the image with a named
# volume at /data and `serve --demo`, waits for /readyz, signs in with the demo's printed
# credentials and adds an item, stops the container (SIGTERM: it must exit 0) and starts it
# again, then checks that the item and the token survived, that the service runs as a user
# other than root with --max-semi-space-size, and that Docker's HEALTHCHECK reports healthy.
# Needs root (or the docker group), docker and debootstrap; builds use the host's network.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE=${WISHLIST_BASE_IMAGE:-wishlist-base:node24-bookworm}
IMAGE=${WISHLIST_IMAGE:-wishlist-service:smoke}
NAME=wishlist-smoke-$$
VOLUME=wishlist-smoke-data-$$

step() { echo "container-smoke: $*" >&2; }
fail() { echo "container-smoke: FAILED: $*" >&2; docker logs "$NAME" 2>&1 | tail -n 40 >&2 || true; exit 1; }
cleanup() { docker rm -f "$NAME" >/dev/null 2>&1 || true; docker volume rm "$VOLUME" >/dev/null 2>&1 || true; }
trap cleanup EXIT

docker info >/dev/null 2>&1 || fail "the Docker engine is not running (start dockerd)"

t0=$SECONDS
bash scripts/container-base.sh "$BASE"
step "base ready in $((SECONDS - t0)) s"

t0=$SECONDS
docker build --network host --build-arg "BASE_IMAGE=$BASE" -t "$IMAGE" . >/tmp/container-smoke-build.log 2>&1 \
  || { tail -n 40 /tmp/container-smoke-build.log >&2; fail "docker build"; }
step "image $IMAGE built in $((SECONDS - t0)) s ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%d MB", $1 / 1e6}'))"

docker volume create "$VOLUME" >/dev/null
docker run -d --name "$NAME" -p 127.0.0.1::3000 -v "$VOLUME:/data" "$IMAGE" serve --demo >/dev/null
BASE_URL="http://$(docker port "$NAME" 3000/tcp | head -n1)"

# Until /readyz answers 200 (at most 60 s).
wait_ready() {
  for _ in $(seq 1 120); do
    [ "$(docker inspect -f '{{.State.Running}}' "$NAME")" = true ] || fail "the container exited"
    curl -fsS -o /dev/null "$BASE_URL/readyz" 2>/dev/null && return 0
    sleep 0.5
  done
  fail "/readyz did not answer within 60 s"
}
wait_ready
step "ready at $BASE_URL"

# The demo's printed credentials and its first call.
logs=$(docker logs "$NAME" 2>&1)
key=$(sed -nE 's/^ +admin API key +(ak_[^ ]+)$/\1/p' <<<"$logs" | head -n1)
secret=$(sed -nE 's/^ +secret +(sk_[^ ]+)$/\1/p' <<<"$logs" | head -n1)
customer=$(grep -oE '"customer_id":"[^"]+"' <<<"$logs" | head -n1 | cut -d'"' -f4)
[ -n "$key" ] && [ -n "$secret" ] && [ -n "$customer" ] || fail "no demo credentials in the log"
token=$(curl -fsS -X POST "$BASE_URL/v1/auth/token" -H 'content-type: application/json' \
  -d "{\"api_key\":\"$key\",\"api_secret\":\"$secret\",\"customer_id\":\"$customer\"}" | sed -E 's/.*"token":"([^"]+)".*/\1/')
curl -fsS -X POST "$BASE_URL/v1/wishlists/me/items" -H "authorization: Bearer $token" -H 'content-type: application/json' \
  -d '{"product_id":"424242","handle":"container-smoke"}' >/dev/null || fail "adding an item"
step "item added for customer $customer"

# Not root, and Node runs with the service's flags (PID 1 is node itself).
uid=$(docker exec "$NAME" id -u)
[ "$uid" != 0 ] || fail "the service runs as root"
cmdline=$(docker exec "$NAME" sh -c "tr '\\0' ' ' < /proc/1/cmdline")
grep -q -- '--max-semi-space-size=16' <<<"$cmdline" || fail "PID 1 is not node with --max-semi-space-size=16: $cmdline"
step "PID 1 runs as uid $uid: $cmdline"

# SIGTERM: drains and exits 0; then the same volume again.
t0=$SECONDS
docker stop "$NAME" >/dev/null
code=$(docker inspect -f '{{.State.ExitCode}}' "$NAME")
[ "$code" = 0 ] || fail "exit code $code after SIGTERM"
step "stopped by SIGTERM in $((SECONDS - t0)) s, exit code 0"
docker start "$NAME" >/dev/null
BASE_URL="http://$(docker port "$NAME" 3000/tcp | head -n1)"
wait_ready
# The token signed before the restart still works (the generated key is on the volume), and the item is there.
curl -fsS "$BASE_URL/v1/wishlists/me" -H "authorization: Bearer $token" | grep -q '"productId":"424242"' \
  || fail "the item did not survive the restart"
step "after the restart the item and the token are still there"

for _ in $(seq 1 90); do
  health=$(docker inspect -f '{{.State.Health.Status}}' "$NAME")
  [ "$health" = healthy ] && break
  [ "$health" = unhealthy ] && fail "HEALTHCHECK reports unhealthy"
  sleep 1
done
[ "$health" = healthy ] || fail "HEALTHCHECK did not report healthy within 90 s"
step "HEALTHCHECK: healthy"
step "passed"
