package serviceimport

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

var t0 = time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)

// export is cluster's export of shop/web at generation gen, exported age
// minutes after t0, with these ports and one endpoint at addr.
func export(cluster string, gen int64, age int, addr string, ports ...mcsv1beta1.ServicePort) *mcv1alpha1.ExportedService {
	var epPorts []discoveryv1.EndpointPort
	for _, p := range ports {
		epPorts = append(epPorts, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(p.Port), Protocol: ptr.To(corev1.ProtocolTCP)})
	}
	return &mcv1alpha1.ExportedService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shepherd-es-" + cluster, Name: "shop.web", Generation: gen},
		Spec: mcv1alpha1.ExportedServiceSpec{
			Cluster: cluster, Namespace: "shop", Name: "web", Type: mcsv1beta1.ClusterSetIP,
			ExportedAt: metav1.NewTime(t0.Add(time.Duration(age) * time.Minute)),
			Ports:      ports,
			EndpointSlices: []mcv1alpha1.ExportedEndpointSlice{{
				Name: "web-" + cluster, AddressType: discoveryv1.AddressTypeIPv4, Ports: epPorts,
				Endpoints: []discoveryv1.Endpoint{{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			}},
		},
	}
}

var (
	portHTTP = mcsv1beta1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}
	portGRPC = mcsv1beta1.ServicePort{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 9090}
)

func with(es *mcv1alpha1.ExportedService, f func(*mcv1alpha1.ExportedServiceSpec)) *mcv1alpha1.ExportedService {
	f(&es.Spec)
	return es
}

// decoded is what a plan's manifests say.
type decoded struct {
	kinds   []string
	imports []mcsv1beta1.ServiceImport
	slices  []discoveryv1.EndpointSlice
}

func decode(t *testing.T, ms []workv1alpha1.Manifest) decoded {
	t.Helper()
	var d decoded
	for i, m := range ms {
		var u map[string]any
		if err := json.Unmarshal(m.Raw, &u); err != nil {
			t.Fatalf("manifest %d: %v", i, err)
		}
		kind, _ := u["kind"].(string)
		d.kinds = append(d.kinds, kind)
		switch kind {
		case mcsv1beta1.ServiceImportKindName:
			var si mcsv1beta1.ServiceImport
			if err := json.Unmarshal(m.Raw, &si); err != nil {
				t.Fatalf("manifest %d: %v", i, err)
			}
			d.imports = append(d.imports, si)
		case "EndpointSlice":
			var s discoveryv1.EndpointSlice
			if err := json.Unmarshal(m.Raw, &s); err != nil {
				t.Fatalf("manifest %d: %v", i, err)
			}
			d.slices = append(d.slices, s)
		}
	}
	return d
}

// sources are the source clusters of the decoded slices, and their
// addresses, in manifest order.
func (d decoded) sources() (clusters, addrs []string) {
	for _, s := range d.slices {
		clusters = append(clusters, s.Labels[mcsv1beta1.LabelSourceCluster])
		for _, ep := range s.Endpoints {
			addrs = append(addrs, ep.Addresses...)
		}
	}
	return clusters, addrs
}

func TestPlanImport(t *testing.T) {
	type cond struct {
		status metav1.ConditionStatus
		reason mcsv1beta1.ServiceExportConditionReason
		// message contains each of these
		says []string
	}
	// verdict is one export's wanted conditions; conflict nil: absent.
	type verdict struct {
		gen      int64
		ready    cond
		conflict *cond
	}
	ready := func(gen int64, says ...string) verdict {
		return verdict{gen: gen, ready: cond{metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonExported, says},
			conflict: &cond{metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoConflicts, nil}}
	}
	pending := func(gen int64, cluster string) verdict {
		return verdict{gen: gen, ready: cond{metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending, []string{"cluster " + cluster + " is not Ready"}}}
	}
	failed := func(gen int64, conflict cond, says ...string) verdict {
		return verdict{gen: gen, ready: cond{metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonFailed, says}, conflict: &conflict}
	}
	noConflict := cond{metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoConflicts, nil}
	portConflict := cond{metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonPortConflict, []string{"conflicting ports", "cluster m1's"}}

	members := []member{{Name: "m1", Ready: true}, {Name: "m2", Ready: true}, {Name: "m3", Ready: false}}
	for _, tc := range []struct {
		name      string
		namespace string // "" is shop
		svc       string // "" is web
		exports   []*mcv1alpha1.ExportedService
		verdicts  map[string]verdict
		// manifests; kinds nil: no manifests at all
		kinds     []string
		ports     []string // the import's port names
		typ       mcsv1beta1.ServiceImportType
		clusters  string // the import's clusters annotation
		sources   []string
		addresses []string
	}{
		{name: "no exports: no import"},
		{name: "exports of clusters outside the ClusterSet: Pending, saying so, and no import",
			exports:  []*mcv1alpha1.ExportedService{export("gone", 2, 0, "10.9.0.1", portHTTP)},
			verdicts: map[string]verdict{"gone": {gen: 2, ready: cond{metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending, []string{"cluster gone is not a member of the ClusterSet"}}}}},
		{name: "one exporter: Ready True Exported, no conflict",
			exports:  []*mcv1alpha1.ExportedService{export("m1", 2, 0, "10.1.0.1", portHTTP)},
			verdicts: map[string]verdict{"m1": ready(2, "3 members", "endpoints of m1")},
			kinds:    []string{"ServiceImport", "Service", "EndpointSlice"}, ports: []string{"http"}, typ: mcsv1beta1.ClusterSetIP,
			clusters: "m1", sources: []string{"m1"}, addresses: []string{"10.1.0.1"}},
		{name: "a member that is not Ready: Pending, its endpoints left out",
			exports:  []*mcv1alpha1.ExportedService{export("m1", 2, 0, "10.1.0.1", portHTTP), export("m3", 5, 0, "10.3.0.1", portHTTP)},
			verdicts: map[string]verdict{"m1": ready(2, "endpoints of m1"), "m3": pending(5, "m3")},
			kinds:    []string{"ServiceImport", "Service", "EndpointSlice"}, ports: []string{"http"}, typ: mcsv1beta1.ClusterSetIP,
			clusters: "m1", sources: []string{"m1"}, addresses: []string{"10.1.0.1"}},
		{name: "only a member that is not Ready exports: Pending, no import",
			exports:  []*mcv1alpha1.ExportedService{export("m3", 5, 0, "10.3.0.1", portHTTP)},
			verdicts: map[string]verdict{"m3": pending(5, "m3")}},
		{name: "the not-Ready member's older export does not decide the import",
			exports:  []*mcv1alpha1.ExportedService{export("m3", 1, 0, "10.3.0.1", portGRPC), export("m1", 2, 10, "10.1.0.1", portHTTP)},
			verdicts: map[string]verdict{"m1": ready(2), "m3": pending(1, "m3")},
			kinds:    []string{"ServiceImport", "Service", "EndpointSlice"}, ports: []string{"http"}, typ: mcsv1beta1.ClusterSetIP,
			clusters: "m1", sources: []string{"m1"}, addresses: []string{"10.1.0.1"}},
		{name: "two exporters with different ports: a PortConflict on both, the import has the union",
			exports: []*mcv1alpha1.ExportedService{export("m2", 4, 5, "10.2.0.1", portGRPC), export("m1", 3, 0, "10.1.0.1", portHTTP)},
			verdicts: map[string]verdict{
				"m1": {gen: 3, ready: cond{metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonExported, []string{"endpoints of m1, m2"}}, conflict: &portConflict},
				"m2": {gen: 4, ready: cond{metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonExported, nil}, conflict: &portConflict},
			},
			kinds: []string{"ServiceImport", "Service", "EndpointSlice", "EndpointSlice"}, ports: []string{"grpc", "http"}, typ: mcsv1beta1.ClusterSetIP,
			clusters: "m1,m2", sources: []string{"m1", "m2"}, addresses: []string{"10.1.0.1", "10.2.0.1"}},
		{name: "two agreeing exporters: no conflict, endpoints of both",
			exports:  []*mcv1alpha1.ExportedService{export("m1", 1, 0, "10.1.0.1", portHTTP), export("m2", 1, 0, "10.2.0.1", portHTTP)},
			verdicts: map[string]verdict{"m1": ready(1), "m2": ready(1)},
			kinds:    []string{"ServiceImport", "Service", "EndpointSlice", "EndpointSlice"}, ports: []string{"http"}, typ: mcsv1beta1.ClusterSetIP,
			clusters: "m1,m2", sources: []string{"m1", "m2"}, addresses: []string{"10.1.0.1", "10.2.0.1"}},
		{name: "Headless: no derived Service",
			exports: []*mcv1alpha1.ExportedService{with(export("m1", 2, 0, "10.1.0.1", portHTTP), func(s *mcv1alpha1.ExportedServiceSpec) {
				s.Type = mcsv1beta1.Headless
			})},
			verdicts: map[string]verdict{"m1": ready(2)},
			kinds:    []string{"ServiceImport", "EndpointSlice"}, ports: []string{"http"}, typ: mcsv1beta1.Headless,
			clusters: "m1", sources: []string{"m1"}, addresses: []string{"10.1.0.1"}},
		{name: "an export of another namespace: Failed on every export, no import",
			exports: []*mcv1alpha1.ExportedService{export("m1", 2, 0, "10.1.0.1", portHTTP),
				with(export("m2", 6, 5, "10.2.0.1", portHTTP), func(s *mcv1alpha1.ExportedServiceSpec) { s.Namespace = "other" })},
			verdicts: map[string]verdict{
				"m1": failed(2, noConflict, "cluster m2 exports other/web, not shop/web"),
				"m2": failed(6, noConflict, "cluster m2 exports other/web, not shop/web"),
			}},
		{name: "a failed render leaves the not-Ready member Pending",
			exports: []*mcv1alpha1.ExportedService{export("m3", 1, 0, "10.3.0.1", portHTTP),
				with(export("m1", 2, 0, "10.1.0.1", portHTTP), func(s *mcv1alpha1.ExportedServiceSpec) { s.Namespace = "other" })},
			verdicts: map[string]verdict{"m1": failed(2, noConflict, "cluster m1 exports other/web"), "m3": pending(1, "m3")}},
		{name: "an invalid Service name: Failed, no import", svc: "Web_1",
			exports:  []*mcv1alpha1.ExportedService{with(export("m1", 2, 0, "10.1.0.1", portHTTP), func(s *mcv1alpha1.ExportedServiceSpec) { s.Name = "Web_1" })},
			verdicts: map[string]verdict{"m1": failed(2, noConflict, `service name "Web_1"`)}},
		{name: "unnamed ports that union into no valid Service: Failed with the conflict kept, no import",
			exports: []*mcv1alpha1.ExportedService{
				export("m1", 2, 0, "10.1.0.1", mcsv1beta1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 80}),
				export("m2", 3, 5, "10.2.0.1", mcsv1beta1.ServicePort{Protocol: corev1.ProtocolTCP, Port: 8080})},
			verdicts: map[string]verdict{"m1": failed(2, portConflict, "has no name"), "m2": failed(3, portConflict, "has no name")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, name := cmp.Or(tc.namespace, "shop"), cmp.Or(tc.svc, "web")
			p, err := planImport(ns, name, slices.Clone(members), tc.exports, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.conditions) != len(tc.verdicts) {
				t.Errorf("conditions for %d exports, want %d: %+v", len(p.conditions), len(tc.verdicts), p.conditions)
			}
			for cluster, w := range tc.verdicts {
				got, ok := p.conditions[cluster]
				if !ok {
					t.Errorf("%s: no conditions", cluster)
					continue
				}
				check := func(typ string, want *cond) {
					c := meta.FindStatusCondition(got, typ)
					if want == nil {
						if c != nil {
							t.Errorf("%s: %s = %+v, want none", cluster, typ, *c)
						}
						return
					}
					if c == nil {
						t.Errorf("%s: no %s in %+v", cluster, typ, got)
						return
					}
					if c.Status != want.status || c.Reason != string(want.reason) || c.ObservedGeneration != w.gen {
						t.Errorf("%s: %s = %s %s gen %d, want %s %s gen %d", cluster, typ, c.Status, c.Reason, c.ObservedGeneration, want.status, want.reason, w.gen)
					}
					for _, s := range want.says {
						if !strings.Contains(c.Message, s) {
							t.Errorf("%s: %s message %q does not say %q", cluster, typ, c.Message, s)
						}
					}
				}
				check(mcv1alpha1.ConditionReady, &w.ready)
				check(mcv1alpha1.ConditionConflict, w.conflict)
				n := 1
				if w.conflict != nil {
					n++
				}
				if len(got) != n {
					t.Errorf("%s: %d conditions, want %d: %+v", cluster, len(got), n, got)
				}
			}

			if tc.kinds == nil {
				if p.manifests != nil {
					t.Fatalf("manifests %d, want nil", len(p.manifests))
				}
				return
			}
			d := decode(t, p.manifests)
			if !slices.Equal(d.kinds, tc.kinds) {
				t.Fatalf("kinds %v, want %v", d.kinds, tc.kinds)
			}
			si := d.imports[0]
			if si.Namespace != ns || si.Name != name || si.Spec.Type != tc.typ {
				t.Errorf("import %s/%s %s, want %s/%s %s", si.Namespace, si.Name, si.Spec.Type, ns, name, tc.typ)
			}
			var ports []string
			for _, pt := range si.Spec.Ports {
				ports = append(ports, pt.Name)
			}
			if !slices.Equal(ports, tc.ports) {
				t.Errorf("import ports %v, want %v", ports, tc.ports)
			}
			if got := si.Annotations[mcs.AnnotationClusters]; got != tc.clusters {
				t.Errorf("import clusters %q, want %q", got, tc.clusters)
			}
			if len(si.Spec.IPs) != 0 || len(si.Spec.IPFamilies) != 0 {
				t.Errorf("the hub's import carries IPs %v families %v: each member fills its own", si.Spec.IPs, si.Spec.IPFamilies)
			}
			sources, addrs := d.sources()
			if !slices.Equal(sources, tc.sources) || !slices.Equal(addrs, tc.addresses) {
				t.Errorf("slices from %v with %v, want %v with %v", sources, addrs, tc.sources, tc.addresses)
			}
			for _, s := range d.slices {
				if s.Namespace != ns || s.Labels[discoveryv1.LabelManagedBy] != mcs.ManagedBy || s.Labels[mcsv1beta1.LabelServiceName] != name {
					t.Errorf("slice %s/%s labels %v", s.Namespace, s.Name, s.Labels)
				}
				_, named := s.Labels[discoveryv1.LabelServiceName]
				if named != (tc.typ == mcsv1beta1.ClusterSetIP) {
					t.Errorf("slice %s: kubernetes.io/service-name set = %v for a %s import", s.Name, named, tc.typ)
				}
			}
		})
	}
}

func TestPlanImportIsOrderFree(t *testing.T) {
	members := []member{{Name: "m1", Ready: true}, {Name: "m2", Ready: true}}
	a := []*mcv1alpha1.ExportedService{export("m1", 3, 0, "10.1.0.1", portHTTP), export("m2", 4, 0, "10.2.0.1", portGRPC)}
	b := []*mcv1alpha1.ExportedService{a[1], a[0]}
	pa, err := planImport("shop", "web", members, a, 0)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := planImport("shop", "web", []member{members[1], members[0]}, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.manifests) != len(pb.manifests) {
		t.Fatalf("%d manifests, then %d", len(pa.manifests), len(pb.manifests))
	}
	for i := range pa.manifests {
		if string(pa.manifests[i].Raw) != string(pb.manifests[i].Raw) {
			t.Errorf("manifest %d differs with the exports' order:\n%s\n%s", i, pa.manifests[i].Raw, pb.manifests[i].Raw)
		}
	}
}

func TestImportWorkName(t *testing.T) {
	for _, tc := range []struct{ ns, name, want string }{
		{"shop", "web", "mcs.shop.web"},
		{"a-b", "c", "mcs.a-b.c"},
		{"a", "b-c", "mcs.a.b-c"},
	} {
		if got := importWorkName(tc.ns, tc.name); got != tc.want {
			t.Errorf("importWorkName(%q, %q) = %q, want %q", tc.ns, tc.name, got, tc.want)
		}
	}
	if importWorkName("a-b", "c") == importWorkName("a", "b-c") {
		t.Errorf("two Services share a Work name")
	}
}

func TestMemberOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []member
		want []string
	}{
		{name: "none", want: nil},
		{name: "sorted by name, readiness kept", in: []member{{Name: "m3"}, {Name: "m1", Ready: true}, {Name: "m2"}}, want: []string{"m1", "m2", "m3"}},
		{name: "already sorted", in: []member{{Name: "a"}, {Name: "b"}}, want: []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sortedMembers(slices.Clone(tc.in))
			var names []string
			for _, m := range got {
				names = append(names, m.Name)
				if m.Ready != (m.Name == "m1") {
					t.Errorf("%s: ready %v", m.Name, m.Ready)
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("order %v, want %v", names, tc.want)
			}
		})
	}
}

// TestPlanImportRefusesAnotherClustersReport: an ExportedService stored in
// one cluster's execution namespace that names another cluster (a Pull
// agent may write only there, but writes what it likes) is not imported,
// is told why, and takes nothing from the real cluster's export.
func TestPlanImportRefusesAnotherClustersReport(t *testing.T) {
	members := []member{{Name: "m1", Ready: true}, {Name: "m2", Ready: true}}
	real := export("m1", 1, 0, "10.1.0.1", portHTTP)
	forged := export("m1", 7, 0, "10.66.0.1", portHTTP)
	forged.Namespace = "shepherd-es-m2" // m2's agent, claiming to be m1
	p, err := planImport("shop", "web", members, []*mcv1alpha1.ExportedService{real, forged}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := p.refused["shepherd-es-m2/shop.web"]
	if !ok || len(got) != 1 || got[0].Status != metav1.ConditionFalse || got[0].Reason != string(mcsv1beta1.ServiceExportReasonFailed) ||
		!strings.Contains(got[0].Message, "a member reports only its own exports") || got[0].ObservedGeneration != 7 {
		t.Fatalf("the forged report's conditions: %+v", got)
	}
	for _, m := range p.manifests {
		if strings.Contains(string(m.Raw), "10.66.0.1") {
			t.Errorf("the forged endpoint reached a manifest: %s", m.Raw)
		}
	}
	if c := p.conditions["m1"]; len(c) != 2 || c[0].Status != metav1.ConditionTrue {
		t.Errorf("the real export's conditions: %+v", c)
	}
}

// TestPlanImportCapsEndpoints: a member reporting more endpoints than the
// cap contributes the first ones only, and its Ready condition says so.
func TestPlanImportCapsEndpoints(t *testing.T) {
	flood := export("m1", 1, 0, "10.1.0.1", portHTTP)
	for i := range 999 {
		flood.Spec.EndpointSlices[0].Endpoints = append(flood.Spec.EndpointSlices[0].Endpoints,
			discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.1.%d.%d", i/250, i%250+2)}})
	}
	for _, tc := range []struct {
		name      string
		max       int
		endpoints int
		capped    bool
	}{
		{"under the cap: every endpoint", 2000, 1000, false},
		{"over the cap: the first ones, named in Ready", 500, 500, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := planImport("shop", "web", []member{{Name: "m1", Ready: true}}, []*mcv1alpha1.ExportedService{flood}, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, m := range p.manifests {
				var s discoveryv1.EndpointSlice
				if err := json.Unmarshal(m.Raw, &s); err == nil && s.Kind == "EndpointSlice" {
					n += len(s.Endpoints)
				}
			}
			if n != tc.endpoints {
				t.Errorf("%d endpoints imported, want %d", n, tc.endpoints)
			}
			msg := p.conditions["m1"][0].Message
			if says := strings.Contains(msg, "capped: cluster m1 reported 1000 endpoints"); says != tc.capped {
				t.Errorf("Ready message %q: names the cap %v, want %v", msg, says, tc.capped)
			}
		})
	}
	if len(flood.Spec.EndpointSlices[0].Endpoints) != 1000 {
		t.Errorf("the cap changed the stored export")
	}
}

func TestWithinGrace(t *testing.T) {
	now := t0.Add(time.Hour)
	cond := func(status metav1.ConditionStatus, ago time.Duration) *metav1.Condition {
		return &metav1.Condition{Type: "Ready", Status: status, LastTransitionTime: metav1.NewTime(now.Add(-ago))}
	}
	for _, tc := range []struct {
		name  string
		ready *metav1.Condition
		ok    bool
		left  time.Duration
	}{
		{"Ready: kept", cond(metav1.ConditionTrue, time.Hour), true, 0},
		{"not Ready for 10s of 30s: kept for 20s more", cond(metav1.ConditionFalse, 10*time.Second), true, 20 * time.Second},
		{"Unknown for 10s: the same", cond(metav1.ConditionUnknown, 10*time.Second), true, 20 * time.Second},
		{"not Ready for 30s: withdrawn", cond(metav1.ConditionFalse, 30*time.Second), false, 0},
		{"never seen Ready: nothing kept", nil, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var since time.Time
			if tc.ready != nil {
				since = tc.ready.LastTransitionTime.Time
			}
			ok, left := withinGrace(tc.ready, since, 30*time.Second, now)
			if ok != tc.ok || left != tc.left {
				t.Errorf("withinGrace = %v, %s; want %v, %s", ok, left, tc.ok, tc.left)
			}
		})
	}
}
