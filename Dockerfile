# notebridge: static binary on a distroless image, running as non-root.
#
#   docker compose build                      # what `docker compose up` runs
#   docker buildx build --build-arg VERSION=$(git describe --always --dirty) -t notebridge .
#
# Needs BuildKit (RUN --mount). Behind a TLS-intercepting proxy, hand the
# proxy's CA bundle in as the build secret "build_ca" (compose:
# NOTEBRIDGE_BUILD_CA=/path/to/bundle.pem; buildx: --secret id=build_ca,src=...).
# It is used for `go mod download` only and never stored in a layer.
#
# The runtime image has no shell: the HEALTHCHECK runs the binary itself.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# go.mod replaces github.com/ory/x with this directory (see its README).
COPY third_party/ third_party/
RUN --mount=type=secret,id=build_ca,target=/run/secrets/build_ca \
    if [ -s /run/secrets/build_ca ]; then \
      cat /etc/ssl/certs/ca-certificates.crt /run/secrets/build_ca >/tmp/ca.pem \
      && export SSL_CERT_FILE=/tmp/ca.pem; \
    fi \
 && go mod download \
 && rm -f /tmp/ca.pem
COPY . .
ARG VERSION=dev
# The compiler cache survives between builds (BuildKit cache, not a layer).
RUN --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/notebridge ./services/notebridge \
 && mkdir -p /out/state \
 && mkdir -m 0700 /out/sync

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/notebridge /usr/local/bin/notebridge
# The state volume (operator journal) must belong to the runtime user.
COPY --from=build --chown=1000:1000 /out/state /var/lib/notebridge
# The sync-state volume's mount point (shared with the bundled Joplin, also
# uid 1000): a new volume takes this owner and mode 0700.
COPY --from=build --chown=1000:1000 /out/sync /sync
# uid 1000 matches the bundled Joplin image, so both read the 0600 secrets.
USER 1000:1000
ENV NOTEBRIDGE_STATE_DIR=/var/lib/notebridge
# The MCP registry's proof that this image is the server.json entry's
# package (deploy/bundles/server.json, docs/bundles.md).
LABEL io.modelcontextprotocol.server.name="io.github.notebridge/notebridge"
EXPOSE 8765 8766
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/notebridge", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/notebridge"]
CMD ["serve", "--listen", "0.0.0.0:8765", "--actions-listen", "0.0.0.0:8766"]
