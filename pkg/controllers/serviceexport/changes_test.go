package serviceexport

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/shepherd-io/shepherd/pkg/mcs"
)

func TestChangesOf(t *testing.T) {
	meta := func(name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: labels}
	}
	exp := func(name string) change { return change{export: true, namespace: "shop", name: name} }
	imp := func(name string) change { return change{namespace: "shop", name: name} }
	for _, tc := range []struct {
		name string
		obj  any
		want []change
	}{
		{"a ServiceExport is its export", &mcsv1beta1.ServiceExport{ObjectMeta: meta("web", nil)}, []change{exp("web")}},
		{"a ServiceImport is its import", &mcsv1beta1.ServiceImport{ObjectMeta: meta("web", nil)}, []change{imp("web")}},
		{"a Service is the export of its name", &corev1.Service{ObjectMeta: meta("web", nil)}, []change{exp("web")}},
		{"a derived Service is also its import's", &corev1.Service{ObjectMeta: meta(mcs.DerivedServiceName("web"), map[string]string{mcsv1beta1.LabelServiceName: "web"})},
			[]change{exp(mcs.DerivedServiceName("web")), imp("web")}},
		{"a local EndpointSlice is its Service's export", &discoveryv1.EndpointSlice{ObjectMeta: meta("web-abc", map[string]string{discoveryv1.LabelServiceName: "web"})},
			[]change{exp("web")}},
		{"an imported EndpointSlice is its import's", &discoveryv1.EndpointSlice{ObjectMeta: meta("web.m2.0", map[string]string{
			discoveryv1.LabelManagedBy: mcs.ManagedBy, mcsv1beta1.LabelServiceName: "web", discoveryv1.LabelServiceName: mcs.DerivedServiceName("web")})},
			[]change{imp("web")}},
		{"an imported EndpointSlice without its Service's name concerns nothing", &discoveryv1.EndpointSlice{ObjectMeta: meta("x", map[string]string{
			discoveryv1.LabelManagedBy: mcs.ManagedBy})}, nil},
		// A slice a member team labelled as imported, but managed by
		// someone else: it is the export's, if any (exportOf leaves out
		// only Shepherd's own imports).
		{"a slice with the MCS label but another manager", &discoveryv1.EndpointSlice{ObjectMeta: meta("y", map[string]string{
			discoveryv1.LabelManagedBy: "team", mcsv1beta1.LabelServiceName: "web", discoveryv1.LabelServiceName: "web"})}, []change{exp("web")}},
		{"an EndpointSlice of no Service concerns nothing", &discoveryv1.EndpointSlice{ObjectMeta: meta("z", nil)}, nil},
		{"a tombstone is its object's", cache.DeletedFinalStateUnknown{Key: "shop/web", Obj: &mcsv1beta1.ServiceExport{ObjectMeta: meta("web", nil)}}, []change{exp("web")}},
		{"anything else concerns nothing", &corev1.ConfigMap{ObjectMeta: meta("web", nil)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := changesOf(tc.obj); !slices.Equal(got, tc.want) {
				t.Fatalf("changesOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPendingTakesWhatChangedOnce(t *testing.T) {
	now := time.Unix(10000, 0)
	p := newPending()
	a, b := change{export: true, namespace: "ns", name: "b"}, change{namespace: "ns", name: "a"}

	// Started: a full pass is pending, so marks ask for no reconcile.
	if p.mark(a) {
		t.Fatal("a mark asked for a reconcile while a full pass is pending")
	}
	if full, cs := p.take(now); !full || cs != nil {
		t.Fatalf("first take = %v %v, want a full pass", full, cs)
	}
	// Nothing pending: the first mark asks, the next ones do not.
	if !p.mark(b) || p.mark(a) || p.mark(b) {
		t.Fatal("only the first mark after a take asks for a reconcile")
	}
	full, cs := p.take(now.Add(time.Second))
	if full || !slices.Equal(cs, []change{a, b}) {
		t.Fatalf("take = %v %+v, want the two changes, exports first", full, cs)
	}
	if full, cs := p.take(now.Add(2 * time.Second)); full || len(cs) != 0 {
		t.Fatalf("a second take = %v %+v, want nothing", full, cs)
	}
	if p.mark() {
		t.Fatal("marking nothing asked for a reconcile")
	}
	// After an error: a full pass.
	p.markFull()
	if full, _ := p.take(now.Add(3 * time.Second)); !full {
		t.Fatal("markFull did not give a full pass")
	}
	// The backstop: a full pass once fullPassEvery went by.
	p.mark(a)
	if full, _ := p.take(now.Add(3*time.Second + fullPassEvery)); !full {
		t.Fatal("no full pass after fullPassEvery")
	}
}
