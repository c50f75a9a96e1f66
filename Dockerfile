# hostemu: a small static image that runs as a non-root user.
#
#   docker build -t hostemu --build-arg VERSION=v1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run --rm -p 4700:4700 -p 4743:4743 hostemu      # 4743: HTTPS, certificates from the local CA
#
# Optional mounts (read-only is enough), enabled with variables:
#   -v ./scenarios:/scenarios:ro -e HOSTEMU_SCENARIOS=/scenarios   scenario YAML, watched
#   -v ./fixtures:/fixtures:ro   -e HOSTEMU_FIXTURES=/fixtures     fixtures replacing the embedded ones
#   -v hostemu-state:/state      -e HOSTEMU_STATE=/state/state.json  persisted state (writable by uid 65532)
#   The local CA is kept in /state/ca (HOSTEMU_CA_DIR): with the volume, the same CA on
#   every start (trust it once); a volume of its own on /state/ca would be root's, not writable.
#   -e HOSTEMU_TLS_ADDR=off                                         no HTTPS listener (on host networking,
#                                                                   where 4743 may clash)
# Every serve flag has its HOSTEMU_* variable; see `docker run --rm hostemu serve -h`.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -tags nomsgpack \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/hostemu ./cmd/hostemu \
 && mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG COMMIT=unknown
# licenses: SPDX NOASSERTION until the repository carries a LICENSE file.
LABEL org.opencontainers.image.title="hostemu" \
      org.opencontainers.image.description="A local emulator of the hosting service's REST API and the envelope-decryption API" \
      org.opencontainers.image.source="https://github.com/hostemu/hostemu" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.licenses="NOASSERTION"
COPY --from=build /out/hostemu /usr/local/bin/hostemu
# An empty directory owned by the runtime user, so that a volume mounted on it is writable.
COPY --from=build --chown=65532:65532 /out/state /state
# nonroot:nonroot, numeric so that Kubernetes' runAsNonRoot can verify it.
USER 65532:65532
ENV HOSTEMU_ADDR=0.0.0.0:4700 HOSTEMU_TLS_ADDR=0.0.0.0:4743 HOSTEMU_CA_DIR=/state/ca
EXPOSE 4700 4743
VOLUME /state
# hostemu stops cleanly on SIGTERM: in-flight requests finish (5 s at most), --state is saved.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=5s --timeout=3s --start-period=2s --retries=3 \
  CMD ["/usr/local/bin/hostemu", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/hostemu"]
CMD ["serve"]
