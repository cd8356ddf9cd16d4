package convert

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// fakeKarmada serves a list of PropagationPolicies in two pages and 404
// for everything else, recording every request's method.
func fakeKarmada(t *testing.T) (*rest.Config, func() []string) {
	var mu sync.Mutex
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method)
		mu.Unlock()
		if r.URL.Path != "/apis/policy.karmada.io/v1alpha1/propagationpolicies" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		item := func(name string) string {
			return `{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"` + name +
				`","namespace":"shop","uid":"u","resourceVersion":"1"},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop"}]}}`
		}
		if r.URL.Query().Get("continue") == "" {
			_, _ = w.Write([]byte(`{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicyList","metadata":{"continue":"next"},"items":[` + item("a") + `]}`))
			return
		}
		_, _ = w.Write([]byte(`{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicyList","metadata":{},"items":[` + item("b") + `]}`))
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), methods...)
	}
}

func TestReadLiveOnlyLists(t *testing.T) {
	cfg, methods := fakeKarmada(t)
	l, err := NewLister(cfg)
	if err != nil {
		t.Fatal(err)
	}
	docs, errs := ReadLive(context.Background(), l)
	if len(errs) != 0 || len(docs) != 2 {
		t.Fatalf("docs %d, errors %+v", len(docs), errs)
	}
	objs, report := Convert(docs)
	if len(objs) != 2 || report.Incomplete() || objs[0].GetUID() != "" {
		t.Errorf("converted %d, report %+v", len(objs), report.Entries)
	}
	for _, m := range methods() {
		if m != http.MethodGet {
			t.Errorf("the control plane was sent a %s", m)
		}
	}
}

// TestReadOnlyClientCannotWrite: even a client built on the read-only
// configuration by mistake cannot write; the request never leaves.
func TestReadOnlyClientCannotWrite(t *testing.T) {
	cfg, methods := fakeKarmada(t)
	dc, err := dynamic.NewForConfig(ReadOnly(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ri := dc.Resource(KarmadaResources[0]).Namespace("shop")
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
		"metadata": map[string]any{"name": "x"}}}
	ctx := context.Background()
	writes := map[string]error{}
	_, writes["create"] = ri.Create(ctx, obj, metav1.CreateOptions{})
	_, writes["update"] = ri.Update(ctx, obj, metav1.UpdateOptions{})
	_, writes["patch"] = ri.Patch(ctx, "x", "application/merge-patch+json", []byte(`{}`), metav1.PatchOptions{})
	writes["delete"] = ri.Delete(ctx, "x", metav1.DeleteOptions{})
	writes["deletecollection"] = ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	for verb, err := range writes {
		if err == nil || !strings.Contains(err.Error(), "only reads") {
			t.Errorf("%s: %v, want a refusal", verb, err)
		}
	}
	if got := methods(); len(got) != 0 {
		t.Errorf("the control plane was sent %v", got)
	}
}
