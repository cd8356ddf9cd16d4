# Shepherd's build entry points. CI runs .ci/run, which calls `make test`'s command.
CONTROLLER_GEN ?= go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0
GO_TEST_FLAGS ?=
# The controller manager's image (make image, docs/install.md).
IMG ?= ghcr.io/shepherd-io/shepherd:latest
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo v0.1.0-dev)
CONTAINER_TOOL ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null)

.PHONY: all generate build image test test-short verify fmt vet bench

all: generate build

## generate: deepcopy functions and CRD manifests from the kubebuilder markers in api/, the controller manager's RBAC (config/rbac/role.yaml) from those in pkg/, and the Helm chart's copies of both
generate:
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=shepherd-controller-manager paths=./pkg/... output:rbac:artifacts:config=config/rbac
	rm -f charts/shepherd/crds/*.yaml
	cp config/crd/bases/*.yaml charts/shepherd/crds/
	cp config/rbac/role.yaml charts/shepherd/files/role.yaml

## build: the shepherd binary into bin/
build:
	go build -o bin/shepherd ./cmd/shepherd

## image: the container image $(IMG) from the Dockerfile, with docker or podman (or CONTAINER_TOOL)
image:
	@if [ -z "$(CONTAINER_TOOL)" ]; then \
	  echo "make image: neither docker nor podman was found: install one, or set CONTAINER_TOOL" >&2; exit 1; fi
	@if ! $(CONTAINER_TOOL) info >/dev/null 2>&1; then \
	  echo "make image: $(CONTAINER_TOOL) does not answer ($(CONTAINER_TOOL) info failed): start it, or set CONTAINER_TOOL" >&2; exit 1; fi
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) -t $(IMG) .

## test: every unit, integration and end-to-end test (the README's test command)
test:
	go test $(GO_TEST_FLAGS) ./...

## test-short: the unit tier, which starts no API server (docs/architecture.md, Testing)
test-short:
	go test -short $(GO_TEST_FLAGS) ./...

fmt:
	gofmt -l -w .

vet:
	go vet ./...

## bench: scheduler benchmarks over the fleet scenarios (the large ones from $SHEPHERD_FLEETS_DIR, see docs/fleet-scenarios.md)
bench:
	go test -run='^$$' -bench=. -benchmem ./pkg/scheduler/...
