# The shepherd binary in a distroless image: `make image IMG=...` builds it
# (docker or podman); config/manager runs it as the controller manager.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=v0.1.0-dev
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static (no cgo): the final image has no C library. The first build
# compiles kube-apiserver's packages too and takes a few minutes.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/shepherd-io/shepherd/pkg/version.Version=${VERSION}" \
      -o /out/shepherd ./cmd/shepherd

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/shepherd /shepherd
USER 65532:65532
ENTRYPOINT ["/shepherd"]
