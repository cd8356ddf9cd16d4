package convert

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
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

// TestReadLiveAutoscalers: the autoscalers are listed from their own group
// and converted; a control plane that does not serve them (a Karmada
// without the autoscaling kinds) is not an error. Nothing but GETs is sent.
func TestReadLiveAutoscalers(t *testing.T) {
	lists := map[string]string{
		"/apis/autoscaling.karmada.io/v1alpha1/federatedhpas": `{"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"FederatedHPAList","metadata":{},"items":[` +
			`{"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"FederatedHPA","metadata":{"name":"web","namespace":"shop","uid":"u","resourceVersion":"9"},` +
			`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":10,` +
			`"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}]},` +
			`"status":{"currentReplicas":2,"desiredReplicas":2}}]}`,
		"/apis/autoscaling.karmada.io/v1alpha1/cronfederatedhpas": `{"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"CronFederatedHPAList","metadata":{},"items":[` +
			`{"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"CronFederatedHPA","metadata":{"name":"web-nights","namespace":"shop"},` +
			`"spec":{"scaleTargetRef":{"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"FederatedHPA","name":"web"},` +
			`"rules":[{"name":"night","schedule":"0 22 * * *","targetMaxReplicas":3}]}}]}`,
	}
	for _, tc := range []struct {
		name   string
		served []string
		want   []string
		rules  []string
	}{
		{"served", []string{"/apis/autoscaling.karmada.io/v1alpha1/federatedhpas", "/apis/autoscaling.karmada.io/v1alpha1/cronfederatedhpas"},
			[]string{"autoscaling.shepherd.io/v1alpha1 CronFederatedHPA shop/web-nights", "autoscaling.shepherd.io/v1alpha1 FederatedHPA shop/web"},
			[]string{"cron-target-group"}},
		{"only FederatedHPAs", []string{"/apis/autoscaling.karmada.io/v1alpha1/federatedhpas"},
			[]string{"autoscaling.shepherd.io/v1alpha1 FederatedHPA shop/web"}, nil},
		{"not served", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var methods []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				methods = append(methods, r.Method)
				mu.Unlock()
				if !slices.Contains(tc.served, r.URL.Path) {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(lists[r.URL.Path]))
			}))
			defer srv.Close()
			l, err := NewLister(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			docs, errs := ReadLive(context.Background(), l)
			if len(errs) != 0 {
				t.Fatalf("errors %+v", errs)
			}
			objs, report := Convert(docs)
			var got []string
			for _, o := range objs {
				got = append(got, o.GetAPIVersion()+" "+o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
				if o.GetUID() != "" || o.GetResourceVersion() != "" || o.Object["status"] != nil {
					t.Errorf("%s keeps the control plane's metadata or status: %v", o.GetName(), o.Object)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("converted %v, want %v", got, tc.want)
			}
			var rules []string
			for _, e := range report.Entries {
				rules = append(rules, e.Rule)
			}
			if !slices.Equal(rules, tc.rules) {
				t.Errorf("report %+v, want rules %v", report.Entries, tc.rules)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(methods) != len(KarmadaResources) {
				t.Errorf("%d requests, want one list per resource (%d)", len(methods), len(KarmadaResources))
			}
			for _, m := range methods {
				if m != http.MethodGet {
					t.Errorf("the control plane was sent a %s", m)
				}
			}
		})
	}
}
