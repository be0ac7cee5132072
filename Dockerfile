# syntax=docker/dockerfile:1
# insight-export as a container for cron, Kubernetes and AWS Batch:
#   docker build -t insight-export .
#   docker run --rm -v "$PWD/jobs:/work/jobs:ro" -e INSIGHT_CLIENT_ID -e INSIGHT_SECRET_KEY \
#     -e AWS_REGION -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY insight-export run jobs/x.yaml
# Two stages: the build stage compiles TypeScript to dist/ and bundles the CLI (dist/bin/cli.js, the sandbox package inside it) with the dev dependencies; the final
# stage has production dependencies only (npm ci --omit=dev), runs as the unprivileged
# "node" user, and has tini as PID 1, which forwards SIGTERM/SIGINT to the exporter (it then
# abandons the windows in progress, leaves nothing half-written and exits 130) and reaps zombies.

# Node 24, the current LTS (Node 20 reached end of life on 30 April 2026; the package itself still
# runs on >= 20.18.1, package.json's engines). Pin a patch release (e.g. 24.21.0) for reproducible
# images. On 24 the CLI keeps its compiled code between starts (module.enableCompileCache, bin/cli.js)
# and zstd is zlib's own (src/sink/zstd.ts, src/source/content-encoding.ts).
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# The workspace's packages (the sandbox, packages/sandbox) are part of the install.
COPY package.json package-lock.json ./
COPY packages/sandbox/package.json ./packages/sandbox/
# --ignore-scripts: no dependency has an install script (none is marked hasInstallScript in the lock
# file), and the package's own `prepare` (which builds dist/) has no sources yet: the build is the step below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts scripts/cli-bundle.ts ./scripts/
COPY src ./src
COPY packages ./packages
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim
# tini: a minimal init that forwards signals to its child (Debian package, no download).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# MALLOC_*: glibc then gives the memory of DuckDB's finished conversions back (src/run/malloc-tuning.ts).
ENV NODE_ENV=production \
    INSIGHT_EXPORT_STAGING_DIR=/tmp/insight-export \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
COPY package.json package-lock.json ./
COPY packages/sandbox/package.json ./packages/sandbox/
# @duckdb/node-api ships its native binary in a platform package: nothing is downloaded at install.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The packaged configuration (found from dist/config/resolve.js as ../../config) and the job schema.
COPY config ./config
COPY schema ./schema
# The bundled CLI on the PATH (what package.json's bin, bin/cli.js, runs where there are no sources); the CLI resolves the link.
RUN chmod 755 dist/bin/cli.js && ln -s /app/dist/bin/cli.js /usr/local/bin/insight-export
# Non-root (uid 1000 of the node image). Mount job files under /work; relative paths
# (jobs/x.yaml, ABI files next to them, a local ./out destination) are taken from here.
USER node
WORKDIR /work
ENTRYPOINT ["/usr/bin/tini", "--", "insight-export"]
CMD ["--help"]
