# notebridge: static binary on a distroless image, running as non-root.
#
#   docker build --build-arg VERSION=$(git describe --always --dirty) -t notebridge .
#
# The runtime image has no shell: the HEALTHCHECK runs the binary itself.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/notebridge ./services/notebridge \
 && mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/notebridge /usr/local/bin/notebridge
# The state volume (operator journal) must belong to the runtime user.
COPY --from=build --chown=1000:1000 /out/state /var/lib/notebridge
# uid 1000 matches the bundled Joplin image, so both read the 0600 secrets.
USER 1000:1000
ENV NOTEBRIDGE_STATE_DIR=/var/lib/notebridge
EXPOSE 8765 8766
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/notebridge", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/notebridge"]
CMD ["serve", "--listen", "0.0.0.0:8765", "--actions-listen", "0.0.0.0:8766"]
