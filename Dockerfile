# Multi-stage build: a static binary on a distroless, non-root base.
# The go build line is the exact command .ci/run runs.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/mcpbridge ./cmd/mcpbridge

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpbridge /usr/local/bin/mcpbridge
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/mcpbridge"]
CMD ["serve", "--transport", "http", "--listen", "0.0.0.0:8080", "--api-key-file", "/run/secrets/mcpbridge-api-keys"]
