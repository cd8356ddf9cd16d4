# Shepherd's build entry points. CI runs .ci/run, which calls `make test`'s command.
CONTROLLER_GEN ?= go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0
GO_TEST_FLAGS ?=

.PHONY: all generate build test verify fmt vet bench

all: generate build

## generate: deepcopy functions and CRD manifests from the kubebuilder markers in api/, and the controller manager's RBAC (config/rbac/role.yaml) from those in pkg/
generate:
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=shepherd-controller-manager paths=./pkg/... output:rbac:artifacts:config=config/rbac

## build: the shepherd binary into bin/
build:
	go build -o bin/shepherd ./cmd/shepherd

## test: every unit, integration and end-to-end test (the README's test command)
test:
	go test $(GO_TEST_FLAGS) ./...

fmt:
	gofmt -l -w .

vet:
	go vet ./...

## bench: scheduler benchmarks over the fleet scenarios (the large ones from $SHEPHERD_FLEETS_DIR, see docs/fleet-scenarios.md)
bench:
	go test -run='^$$' -bench=. -benchmem ./pkg/scheduler/...
