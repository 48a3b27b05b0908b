# Multi-stage build: a static binary on a distroless, non-root base.
# The build command is the one .ci/run runs (scripts/build.sh).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN sh scripts/build.sh /out/mcpbridge

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpbridge /usr/local/bin/mcpbridge
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/mcpbridge"]
CMD ["serve", "--transport", "http", "--listen", "0.0.0.0:8080"]
