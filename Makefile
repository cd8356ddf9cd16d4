# Shepherd's build entry points. CI runs .ci/run, which calls `make test`'s command.
CONTROLLER_GEN ?= go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0
# golangci-lint, pinned; .ci/run reads this version (configuration: .golangci.yml).
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= go run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
GO_TEST_FLAGS ?=
# The images (make image, docs/install.md): REGISTRY/<name>:TAG.
REGISTRY ?= ghcr.io/shepherd-io
TAG ?= latest
PLATFORMS ?= linux/$(shell go env GOARCH)
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo v0.1.0-dev)

.PHONY: all generate build image test test-short lint verify fmt vet bench

all: generate build

## generate: deepcopy functions and CRD manifests from the kubebuilder markers in api/, the ServiceExport CRD from sigs.k8s.io/mcs-api (templates on the hub), the controller manager's RBAC (config/rbac/role.yaml) from those in pkg/, and the Helm chart's copies of all
generate:
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=shepherd-controller-manager paths=./pkg/... output:rbac:artifacts:config=config/rbac
	cp "$$(go list -m -f '{{.Dir}}' sigs.k8s.io/mcs-api)/config/crd/multicluster.x-k8s.io_serviceexports.yaml" config/crd/mcs/ && chmod 644 config/crd/mcs/*.yaml
	rm -f charts/shepherd/crds/*.yaml
	cp config/crd/bases/*.yaml config/crd/mcs/*.yaml charts/shepherd/crds/
	cp config/rbac/role.yaml charts/shepherd/files/role.yaml

## build: the shepherd CLI and the lean component binaries (shepherd-controller-manager, shepherd-agent) into bin/
build:
	go build -o bin/shepherd ./cmd/shepherd
	go build -o bin/shepherd-controller-manager ./cmd/shepherd-controller-manager
	go build -o bin/shepherd-agent ./cmd/shepherd-agent

## image: the images of the controller manager, the agent and the shepherd command, without a container runtime, into bin/images (hack/image)
image:
	go run ./hack/image -out bin/images -registry $(REGISTRY) -tag $(TAG) -platforms $(PLATFORMS) \
	  -version $(VERSION) -revision "$$(git rev-parse HEAD 2>/dev/null)" -created "$$(git log -1 --format=%ct 2>/dev/null)"

## test: every unit, integration and end-to-end test (the README's test command)
test:
	go run ./hack/test $(GO_TEST_FLAGS) ./...

## test-short: the unit tier, which starts no API server (docs/architecture.md, Testing)
test-short:
	go test -short $(GO_TEST_FLAGS) ./...

## lint: golangci-lint with .golangci.yml
lint:
	$(GOLANGCI_LINT) run ./...

fmt:
	gofmt -l -w .

vet:
	go vet ./...

## bench: scheduler benchmarks over the fleet scenarios (the large ones from $SHEPHERD_FLEETS_DIR, see docs/fleet-scenarios.md)
bench:
	go test -run='^$$' -bench=. -benchmem ./pkg/scheduler/...
