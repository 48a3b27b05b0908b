#!/bin/sh
# Builds the static mcpbridge binary; used by the Dockerfile and by CI.
set -eu
out=${1:-mcpbridge}
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out" ./cmd/mcpbridge
