# The wishlist service as a container image (docs/operations.md, "Container image").
#
#   docker build -t wishlist-service .
#   docker run -p 3000:3000 -v wishlist-data:/data wishlist-service serve --demo
#
# Stage 1 builds the workspaces and packs the server exactly as it is published
# (`npm pack`: its compiled dist/ and the built widget, dashboard and demo); stage 2 installs
# that package with production dependencies only; the last stage is the base image with the
# installed service and nothing else, run by an unprivileged user. The base is a build
# argument: the official Node 24 slim image by default, any Debian-like image with `node`
# and `npm` on PATH otherwise (scripts/container-base.sh makes one without a registry).
ARG BASE_IMAGE=node:24-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /src
ENV npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
# Dependencies first (a layer that only the lockfile and manifests change), without the
# browser tests' workspace; lifecycle scripts are not needed to build.
COPY package.json package-lock.json .npmrc ./
COPY apps/server/package.json apps/server/
COPY apps/dashboard/package.json apps/dashboard/
COPY apps/demo/package.json apps/demo/
COPY packages/sdk/package.json packages/sdk/
COPY packages/widget/package.json packages/widget/
COPY e2e/package.json e2e/
RUN npm ci --ignore-scripts -w apps/server -w packages/sdk -w apps/dashboard -w packages/widget -w apps/demo
COPY scripts/gzip-assets.mjs scripts/
COPY apps/server apps/server
COPY apps/dashboard apps/dashboard
COPY apps/demo apps/demo
COPY packages/sdk packages/sdk
COPY packages/widget packages/widget
COPY LICENSE ./
RUN npm run build -w packages/sdk -w packages/widget -w apps/dashboard -w apps/demo -w apps/server \
 && mkdir /pkg && npm pack -w apps/server --pack-destination /pkg

FROM ${BASE_IMAGE} AS install
WORKDIR /app
COPY --from=build /pkg/ /pkg/
RUN echo '{"private": true}' > package.json \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund --no-package-lock /pkg/wishlist-service-*.tgz \
 && rm -rf /root/.npm

FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="wishlist-service" \
      org.opencontainers.image.description="Wishlists, share links, analytics, signed webhooks and product reviews for commerce storefronts" \
      org.opencontainers.image.licenses="MIT"
# An unprivileged user that owns the data volume and nothing else; the volume is 0700 (a new
# named volume takes the folder's owner and mode), its files 0600.
RUN groupadd --system --gid 10001 wishlist \
 && useradd --system --uid 10001 --gid wishlist --home-dir /data --no-create-home --shell /usr/sbin/nologin wishlist \
 && mkdir -p /data && chown wishlist:wishlist /data && chmod 0700 /data
COPY --from=install /app/node_modules /app/node_modules
# Embedded SQLite (and its generated token key) on the volume; PostgreSQL + Redis by setting
# DATABASE_URL, REDIS_URL and JWT_SECRET instead. HOST 0.0.0.0: reachable from outside the
# container; set PUBLIC_BASE_URL to the address clients use.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/wishlist.db \
    PATH=/app/node_modules/.bin:$PATH
VOLUME /data
WORKDIR /data
USER wishlist:wishlist
EXPOSE 3000
# `wishlist` is bin/wishlist.js, whose shebang runs Node with the service's V8 flags
# (--max-semi-space-size=16: src/cli/node-flags.ts); `env` execs node, so node is PID 1 and
# receives SIGTERM itself: it stops accepting, drains in-flight requests and webhook
# attempts, then exits 0 (docker stop waits 10 s by default; --time for longer drains).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["wishlist"]
CMD ["serve"]
