package dashboard_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/dashboard/dashboardtest"
)

// export is dashboardtest.ExportedService, exported ago before the epoch.
func export(cluster, ns, name string, endpoints int, ready bool, ago time.Duration) *mcv1alpha1.ExportedService {
	es := dashboardtest.ExportedService(cluster, ns, name, endpoints, ready)
	es.Spec.ExportedAt = metav1.Time{Time: dashboardtest.Epoch.Add(-ago)}
	return es
}

func headless(es *mcv1alpha1.ExportedService) *mcv1alpha1.ExportedService {
	es.Spec.Type = mcsv1beta1.Headless
	return es
}

// serviceLines writes a view's rows as "ns/name Type m1(2) m2(0,not ready) Conflict: message".
func serviceLines(v dashboard.ServicesView) []string {
	var out []string
	for _, r := range v.Rows {
		line := r.Namespace + "/" + r.Name + " " + r.Type
		for _, c := range r.Serving {
			if c.Ready {
				line += fmt.Sprintf(" %s(%d)", c.Cluster, c.Endpoints)
			} else {
				line += fmt.Sprintf(" %s(%d,not ready)", c.Cluster, c.Endpoints)
			}
		}
		if r.Conflict != "" {
			line += " " + r.Conflict + ": " + r.ConflictMessage
		}
		out = append(out, line)
	}
	return out
}

func TestBuildServices(t *testing.T) {
	for _, tc := range []struct {
		name    string
		exports []*mcv1alpha1.ExportedService
		want    []string
		// conflicts and notReady are the view's counts.
		conflicts, notReady int
	}{
		{name: "nothing exported"},
		{
			name: "one row per Service, in namespace and name order, its clusters by name",
			exports: []*mcv1alpha1.ExportedService{
				export("m2", "shop", "checkout", 3, true, 0), export("m1", "web", "front", 1, true, 0),
				export("m1", "shop", "checkout", 2, true, time.Minute), export("m3", "shop", "cart", 0, true, 0),
			},
			want: []string{"shop/cart ClusterSetIP m3(0)", "shop/checkout ClusterSetIP m1(2) m2(3)", "web/front ClusterSetIP m1(1)"},
		},
		{
			name: "a cluster whose endpoints the hub left out is not ready",
			exports: []*mcv1alpha1.ExportedService{
				export("m1", "shop", "checkout", 2, true, 0), export("m2", "shop", "checkout", 4, false, 0), export("m3", "shop", "cart", 1, false, 0),
			},
			want:     []string{"shop/cart ClusterSetIP m3(1,not ready)", "shop/checkout ClusterSetIP m1(2) m2(4,not ready)"},
			notReady: 2,
		},
		{
			name: "exports that disagree: the oldest decides the type, the conflict is named",
			exports: []*mcv1alpha1.ExportedService{
				export("m1", "shop", "checkout", 2, true, 0), headless(export("m2", "shop", "checkout", 1, true, time.Hour)),
				export("m1", "shop", "cart", 1, true, 0),
			},
			want: []string{"shop/cart ClusterSetIP m1(1)",
				"shop/checkout Headless m1(2) m2(1) TypeConflict: conflicting type: the ServiceImport takes cluster m2's (the oldest export); clusters m1 differ"},
			conflicts: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &dashboard.Snapshot{Now: dashboardtest.Epoch, ExportedServices: tc.exports}
			var before []string
			for _, es := range tc.exports {
				before = append(before, es.Namespace+"/"+es.Name)
			}
			v := dashboard.BuildServices(s)
			if got := serviceLines(v); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rows\n%q\nwant\n%q", got, tc.want)
			}
			if v.Conflicts != tc.conflicts || v.NotReady != tc.notReady {
				t.Errorf("%d in conflict, %d not ready; want %d, %d", v.Conflicts, v.NotReady, tc.conflicts, tc.notReady)
			}
			var after []string
			for _, es := range s.ExportedServices {
				after = append(after, es.Namespace+"/"+es.Name)
			}
			if !reflect.DeepEqual(before, after) {
				t.Errorf("the snapshot's exports were reordered: %v, then %v", before, after)
			}
		})
	}
}

// TestServicesPage: /services shows each exported Service with its
// serving clusters, the not-ready ones marked, and a conflict with its
// message; the navigation links it; a live reload gets its live region
// alone; without exports it says how to export a Service.
func TestServicesPage(t *testing.T) {
	snap := dashboardtest.Fleet(12, 30)
	snap.ExportedServices = []*mcv1alpha1.ExportedService{
		export("cluster-0000", "team-00", "api", 2, true, time.Hour),
		headless(export("cluster-0001", "team-00", "api", 3, false, 0)),
		export("cluster-0002", "team-01", "web", 1, true, 0),
	}
	ts, c := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: snap}})
	code, body := get(t, c, ts.URL+"/services")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{
		`<a href="/services" aria-current="page">Services</a>`,
		"<strong>2</strong> exported Services", "<strong class=\"warn\">1</strong> in conflict", "<strong class=\"warn\">1</strong> serving clusters not ready",
		`<tr data-service="team-00/api" class="attention">`, "<td>team-00/api</td><td>ClusterSetIP</td>",
		`<a href="/workloads?cluster=cluster-0000">cluster-0000</a>: 2 endpoints</li>`,
		`<a href="/workloads?cluster=cluster-0001">cluster-0001</a>: 3 endpoints <span class="state unhealthy"`, ">not ready</span>",
		`<span class="health unhealthy">TypeConflict</span>`, "conflicting type: the ServiceImport takes cluster cluster-0000&#39;s (the oldest export); clusters cluster-0001 differ",
		`<tr data-service="team-01/web">`, `<a href="/workloads?cluster=cluster-0002">cluster-0002</a>: 1 endpoint</li>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/services lacks %q", want)
		}
	}
	if strings.Index(body, "team-00/api") > strings.Index(body, "team-01/web") {
		t.Error("rows are not in namespace and name order")
	}
	if _, other := get(t, c, ts.URL+"/workloads"); !strings.Contains(other, `<a href="/services" >Services</a>`) {
		t.Error("the navigation of the other pages does not link the Services page")
	}
	if _, frag := get(t, c, ts.URL+"/services", "X-Shepherd-Fragment", "1"); strings.Contains(frag, "<nav") || !strings.Contains(frag, "team-01/web") {
		t.Errorf("the live reload is not the live region alone:\n%.300s", frag)
	}

	empty, ec := serve(t, dashboard.Options{})
	code, body = get(t, ec, empty.URL+"/services")
	if code != http.StatusOK || !strings.Contains(body, "No Service is exported") || !strings.Contains(body, "<code>ServiceExport</code>") ||
		!strings.Contains(body, "docs/multicluster-services.md") || strings.Contains(body, "<table") {
		t.Errorf("the empty Services page (status %d) does not say how to export a Service:\n%s", code, body)
	}
}
