// Package testenv starts a real embedded hub (etcd and kube-apiserver with
// Shepherd's CRDs) for integration and end-to-end tests, and applies YAML to
// it the way kubectl does. Nothing here is a fake: tests talk to a real API
// server.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/shepherd-io/shepherd/config/crd"
	"github.com/shepherd-io/shepherd/internal/dev/controlplane"
	"github.com/shepherd-io/shepherd/pkg/logging"
)

// FieldManager is the server-side apply field manager tests use.
const FieldManager = "shepherd-tests"

// Hub is a running embedded control plane with clients.
type Hub struct {
	ControlPlane *controlplane.ControlPlane
	Config       *rest.Config
	Dynamic      dynamic.Interface
	Mapper       meta.ResettableRESTMapper
	cancel       context.CancelFunc
}

// stderrLogger logs errors and V(0) lines to stderr. It does not use
// testing.T, because upstream goroutines may log after a test returned.
func stderrLogger() logr.Logger {
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
}

// Start starts a hub with Shepherd's CRDs in dataDir. Call Stop when done.
// Under -short it refuses (see ErrShort): the unit tier starts no API
// server, and a test that forgot Heavy(t) must fail there rather than
// start a hub unnoticed.
func Start(dataDir string) (*Hub, error) {
	if short() {
		return nil, ErrShort
	}
	crds, err := crd.Hub()
	if err != nil {
		return nil, err
	}
	logging.RedirectKlog(stderrLogger().WithName("klog"))
	ctx, cancel := context.WithCancel(context.Background())
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: dataDir, CRDs: crds, Logger: stderrLogger()})
	if err != nil {
		cancel()
		return nil, err
	}
	cfg := cp.RestConfig()
	cfg.QPS, cfg.Burst = 500, 1000
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &Hub{ControlPlane: cp, Config: cfg, Dynamic: dc, Mapper: mapper, cancel: cancel}, nil
}

// Stop shuts the hub down and waits for it.
func (h *Hub) Stop() error {
	h.cancel()
	err := h.ControlPlane.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// DecodeYAML splits a multi-document YAML stream into objects, skipping
// empty documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// Resource returns the dynamic client for obj's kind, in obj's namespace
// (default "default" for namespaced kinds).
func (h *Hub) Resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := h.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		h.Mapper.Reset()
		m, err = h.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace("default")
		}
		return h.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
	}
	return h.Dynamic.Resource(m.Resource), nil
}

// Apply server-side applies every object of a YAML stream, in order.
func (h *Hub) Apply(ctx context.Context, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := DecodeYAML(data)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		applied, err := h.ApplyObject(ctx, obj)
		if err != nil {
			return out, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		out = append(out, applied)
	}
	return out, nil
}

// ApplyObject server-side applies one object.
func (h *Hub) ApplyObject(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := h.Resource(obj)
	if err != nil {
		return nil, err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := true
	return ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
}

// ApplyFile applies a YAML file.
func (h *Hub) ApplyFile(ctx context.Context, path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return h.Apply(ctx, data)
}

// YAMLFiles lists the .yaml and .yml files below dir, sorted.
func YAMLFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return err
	})
	return files, err
}

// IsInvalid reports whether err is the API server refusing an invalid object.
func IsInvalid(err error) bool { return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) }

// Create creates every object of a YAML stream with a plain POST, as
// `kubectl create` does.
func (h *Hub) Create(ctx context.Context, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := DecodeYAML(data)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		ri, err := h.Resource(obj)
		if err != nil {
			return out, err
		}
		created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		if err != nil {
			return out, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		out = append(out, created)
	}
	return out, nil
}
