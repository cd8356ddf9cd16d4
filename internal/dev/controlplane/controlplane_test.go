package controlplane_test

// Startup time, measured on the 2-core / 24 GiB dev machine with a warm
// build cache, from Start() to return (etcd ready, apiserver /readyz ok,
// default namespace present, kubeconfig written, 1 CRD Established):
//   - fresh data dir (incl. PKI generation, RBAC bootstrap): 2.1–3.7 s
//   - restart on an existing data dir:                       2.1–2.6 s
//   - with another `go test` compiling/running alongside:    up to ~11 s
// Shutdown (cancel → Wait returns) takes ~1.1 s, even with an open watch;
// most of it is net/http's fixed 1 s wait for HTTP/2 GOAWAY acknowledgement.
// The whole package (5 starts) runs in ~20–25 s on a quiet machine.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/shepherd-io/shepherd/internal/dev/controlplane"
	"github.com/shepherd-io/shepherd/pkg/logging"
	"github.com/shepherd-io/shepherd/test/testenv"
)

var widgetGVR = schema.GroupVersionResource{Group: "test.shepherd.io", Version: "v1alpha1", Resource: "widgets"}

// stderrLogger prints V(0) logs and errors. It deliberately does not use
// testing.T: upstream goroutines may log after a test has returned, which
// would panic with a *testing.T-backed logger.
func stderrLogger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, prefix, args)
	}, funcr.Options{Verbosity: 0})
}

func TestMain(m *testing.M) {
	// Keep only kube-apiserver errors; its info chatter goes to V(2).
	logging.RedirectKlog(stderrLogger().WithName("klog"))
	os.Exit(m.Run())
}

// widgetCRD is a minimal namespaced CRD with a structural schema and one CEL
// rule, enough to prove apiextensions and CEL validation are wired up.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	integer := apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr(0.0)}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.test.shepherd.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgetGVR.Group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList",
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: widgetGVR.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{
					OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"spec": {
								Type:       "object",
								Required:   []string{"size", "maxSize"},
								Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": integer, "maxSize": integer},
								XValidations: apiextensionsv1.ValidationRules{{
									Rule:      "self.size <= self.maxSize",
									Message:   "must not exceed spec.maxSize",
									FieldPath: ".size",
								}},
							},
						},
					},
				},
			}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func widget(ns, name string, size, maxSize int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": widgetGVR.GroupVersion().String(),
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"size": size, "maxSize": maxSize},
	}}
}

// start runs a control plane on dir and registers a cleanup that stops it.
func start(t *testing.T, dir string) (*controlplane.ControlPlane, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	begin := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		DataDir: dir,
		CRDs:    []*apiextensionsv1.CustomResourceDefinition{widgetCRD()},
		Logger:  stderrLogger().WithName(t.Name()),
	})
	if err != nil {
		cancel()
		t.Fatalf("Start: %v", err)
	}
	t.Logf("control plane started in %s at %s", time.Since(begin).Round(time.Millisecond), cp.URL())
	t.Cleanup(func() {
		cancel()
		if err := cp.Wait(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return cp, cancel
}

// clientsFromKubeconfig goes through the written kubeconfig file rather than
// RestConfig, so the tests also prove the file is usable.
func clientsFromKubeconfig(t *testing.T, cp *controlplane.ControlPlane) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: cp.KubeconfigPath()},
		&clientcmd.ConfigOverrides{CurrentContext: controlplane.KubeconfigName},
	).ClientConfig()
	if err != nil {
		t.Fatalf("loading kubeconfig: %v", err)
	}
	if cfg.Host != cp.URL() {
		t.Fatalf("kubeconfig server %q, want %q", cfg.Host, cp.URL())
	}
	return mustClients(t, cfg)
}

func mustClients(t *testing.T, cfg *rest.Config) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kc, dc
}

// seed creates a namespace, a ConfigMap and a valid Widget in it.
func seed(ctx context.Context, t *testing.T, kc kubernetes.Interface, dc dynamic.Interface, ns string) {
	t.Helper()
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"color": "blue"}}
	if _, err := kc.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating configmap: %v", err)
	}
	if _, err := dc.Resource(widgetGVR).Namespace(ns).Create(ctx, widget(ns, "good", 2, 3), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating valid widget: %v", err)
	}
}

func TestControlPlane(t *testing.T) {
	testenv.Heavy(t)
	cp, _ := start(t, t.TempDir())
	ctx := t.Context()
	kc, dc := clientsFromKubeconfig(t, cp)

	seed(ctx, t, kc, dc, "shepherd-test")

	got, err := dc.Resource(widgetGVR).Namespace("shepherd-test").Get(ctx, "good", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting widget: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 2 {
		t.Errorf("spec.size = %d, want 2", size)
	}

	_, err = dc.Resource(widgetGVR).Namespace("shepherd-test").Create(ctx, widget("shepherd-test", "bad", 5, 3), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("creating invalid widget: got %v, want Invalid", err)
	}
	if !strings.Contains(err.Error(), "spec.size") || !strings.Contains(err.Error(), "must not exceed spec.maxSize") {
		t.Errorf("validation error %q does not name spec.size and the rule message", err)
	}
	t.Logf("invalid widget rejected: %v", err)

	// A second control plane on the same data dir must be refused at once
	// rather than hang inside embedded etcd.
	_, err = controlplane.Start(ctx, controlplane.Options{DataDir: filepath.Dir(cp.KubeconfigPath())})
	if err == nil || !strings.Contains(err.Error(), "another running control plane") {
		t.Errorf("second Start on the same data dir: got %v, want lock error", err)
	}

	// RestConfig returns an independent copy.
	rc := cp.RestConfig()
	rc.Host = "https://example.invalid"
	if cp.RestConfig().Host == rc.Host {
		t.Error("RestConfig did not return a copy")
	}
}

func TestRestartKeepsData(t *testing.T) {
	testenv.Heavy(t)
	dir := t.TempDir()
	cp, cancel := start(t, dir)
	kc, dc := clientsFromKubeconfig(t, cp)
	seed(t.Context(), t, kc, dc, "durable")
	caBefore := readFile(t, filepath.Join(dir, "pki", "ca.crt"))
	adminBefore := readFile(t, filepath.Join(dir, "pki", "admin.crt"))

	// An open watch must not hold up shutdown (`shepherd up` has to exit
	// within 5s of SIGTERM while controllers are watching).
	w, err := kc.CoreV1().ConfigMaps("durable").Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	begin := time.Now()
	cancel()
	if err := cp.Wait(); err != nil {
		t.Fatalf("first shutdown: %v", err)
	}
	stopped := time.Since(begin)
	t.Logf("control plane stopped in %s", stopped.Round(time.Millisecond))
	if stopped > 5*time.Second {
		t.Errorf("shutdown took %s, want < 5s", stopped)
	}

	cp2, _ := start(t, dir)
	kc2, dc2 := clientsFromKubeconfig(t, cp2)
	ctx := t.Context()
	cm, err := kc2.CoreV1().ConfigMaps("durable").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap after restart: %v", err)
	}
	if cm.Data["color"] != "blue" {
		t.Errorf("configmap data after restart = %v", cm.Data)
	}
	if _, err := dc2.Resource(widgetGVR).Namespace("durable").Get(ctx, "good", metav1.GetOptions{}); err != nil {
		t.Fatalf("widget after restart: %v", err)
	}
	if !bytes.Equal(caBefore, readFile(t, filepath.Join(dir, "pki", "ca.crt"))) ||
		!bytes.Equal(adminBefore, readFile(t, filepath.Join(dir, "pki", "admin.crt"))) {
		t.Error("certificates were regenerated on restart; old kubeconfigs would break")
	}

	begin = time.Now()
	if err := cp2.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("second control plane stopped in %s", time.Since(begin).Round(time.Millisecond))
	select {
	case <-cp2.Done():
	default:
		t.Error("Done not closed after Stop returned")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConcurrentInstances runs two control planes side by side in one
// process: they share upstream globals (feature gates, metrics registry) but
// must keep their data separate.
func TestConcurrentInstances(t *testing.T) {
	testenv.Heavy(t)
	a, _ := start(t, t.TempDir())
	b, _ := start(t, t.TempDir())
	ctx := t.Context()
	ka, _ := mustClients(t, a.RestConfig())
	kb, _ := mustClients(t, b.RestConfig())

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a"}}
	if _, err := ka.CoreV1().ConfigMaps(metav1.NamespaceDefault).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create in a: %v", err)
	}
	if _, err := kb.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, "only-in-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get in b: got %v, want NotFound", err)
	}
}
