# hostemu: a small static image that runs as a non-root user.
#
#   docker build -t hostemu --build-arg VERSION=v1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run --rm -p 4700:4700 -p 4743:4743 hostemu      # 4743: HTTPS, certificates from the local CA
#
# Optional mounts (read-only is enough), enabled with variables:
#   -v ./scenarios:/scenarios:ro -e HOSTEMU_SCENARIOS=/scenarios   scenario YAML, watched
#   -v ./fixtures:/fixtures:ro   -e HOSTEMU_FIXTURES=/fixtures     fixtures replacing the embedded ones
#   -v hostemu-state:/state      -e HOSTEMU_STATE=/state/state.json  persisted state (writable by uid 65532)
#   (the same /state volume)     -e HOSTEMU_CA_DIR=/state/ca       the same local CA on every start (trust it once);
#                                a volume of its own on /state/ca would be root's, not writable
# Every serve flag has its HOSTEMU_* variable; see `docker run --rm hostemu serve -h`.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/hostemu ./cmd/hostemu \
 && mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hostemu /usr/local/bin/hostemu
# An empty directory owned by the runtime user, so that a volume mounted on it is writable.
COPY --from=build --chown=65532:65532 /out/state /state
# nonroot:nonroot, numeric so that Kubernetes' runAsNonRoot can verify it.
USER 65532:65532
ENV HOSTEMU_ADDR=0.0.0.0:4700 HOSTEMU_TLS_ADDR=0.0.0.0:4743
EXPOSE 4700 4743
HEALTHCHECK --interval=5s --timeout=3s --start-period=2s --retries=3 \
  CMD ["/usr/local/bin/hostemu", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/hostemu"]
CMD ["serve"]
