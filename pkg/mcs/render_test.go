package mcs

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
)

// endpoints is n ready endpoints from ip base.n, on a node, with a pod
// and hints, which the import must drop.
func endpoints(base string, n int) []discoveryv1.Endpoint {
	var out []discoveryv1.Endpoint
	for i := range n {
		out = append(out, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("%s.%d.%d", base, i/250, i%250)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			Hostname:   ptr.To(fmt.Sprintf("pod-%d", i)),
			NodeName:   ptr.To("node-1"),
			Zone:       ptr.To("z1"),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("pod-%d", i)},
			Hints:      &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z1"}}},
		})
	}
	return out
}

var httpPort = []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}}

func slice(name string, at discoveryv1.AddressType, eps []discoveryv1.Endpoint, ports []discoveryv1.EndpointPort) mcv1alpha1.ExportedEndpointSlice {
	return mcv1alpha1.ExportedEndpointSlice{Name: name, AddressType: at, Endpoints: eps, Ports: ports}
}

func withSlices(s ...mcv1alpha1.ExportedEndpointSlice) func(*spec) {
	return func(e *spec) { e.EndpointSlices = s }
}

func render(t *testing.T, exports ...spec) Manifests {
	t.Helper()
	out, err := Render("ns", "svc", Merge(exports), exports)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRenderClusterSetIP(t *testing.T) {
	out := render(t,
		export("b", 1, labels("team", "x"), withSlices(slice("s1", discoveryv1.AddressTypeIPv4, endpoints("10.1", 2), httpPort))),
		export("a", 0, labels("team", "x"), func(s *spec) {
			s.SessionAffinity = corev1.ServiceAffinityClientIP
			s.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}, withSlices(slice("s1", discoveryv1.AddressTypeIPv4, endpoints("10.0", 1), httpPort))))

	imp := out.Import
	if imp.Namespace != "ns" || imp.Name != "svc" || imp.Kind != "ServiceImport" || imp.APIVersion != "multicluster.x-k8s.io/v1beta1" {
		t.Errorf("import %s/%s %s %s", imp.Namespace, imp.Name, imp.APIVersion, imp.Kind)
	}
	if imp.Annotations[AnnotationClusters] != "a,b" || imp.Labels["team"] != "x" {
		t.Errorf("import labels %v annotations %v", imp.Labels, imp.Annotations)
	}
	if imp.Spec.IPs != nil || imp.Spec.IPFamilies != nil || imp.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		t.Errorf("import spec %+v: no IPs or families, the oldest's affinity", imp.Spec)
	}

	svc := out.Service
	if svc == nil {
		t.Fatal("no derived Service")
	}
	if svc.Name != DerivedServiceName("svc") || svc.Namespace != "ns" || svc.Labels[mcsv1beta1.LabelServiceName] != "svc" ||
		svc.Spec.Selector != nil || svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		t.Errorf("derived Service %+v", svc)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntValue() != 80 || svc.Spec.Ports[0].Name != "http" {
		t.Errorf("derived ports %+v", svc.Spec.Ports)
	}

	if len(out.EndpointSlices) != 2 {
		t.Fatalf("%d slices, want one per cluster", len(out.EndpointSlices))
	}
	for i, cluster := range []string{"a", "b"} {
		s := out.EndpointSlices[i]
		want := map[string]string{mcsv1beta1.LabelServiceName: "svc", mcsv1beta1.LabelSourceCluster: cluster,
			discoveryv1.LabelManagedBy: ManagedBy, discoveryv1.LabelServiceName: svc.Name}
		if !equality.Semantic.DeepEqual(s.Labels, want) || s.Name != "svc."+cluster+".0" || s.Kind != "EndpointSlice" {
			t.Errorf("slice %d: %s %v", i, s.Name, s.Labels)
		}
		for _, ep := range s.Endpoints {
			if ep.NodeName != nil || ep.TargetRef != nil || ep.Hints != nil || ep.Zone == nil || ep.Hostname == nil || !*ep.Conditions.Ready {
				t.Errorf("endpoint %+v: no node, pod or hints; zone, hostname and conditions stay", ep)
			}
		}
	}
	if got := len(out.Objects()); got != 4 {
		t.Errorf("%d objects, want import, Service and 2 slices", got)
	}
}

func TestRenderHeadless(t *testing.T) {
	out := render(t, export("a", 0, headless, ports(), withSlices(slice("s", discoveryv1.AddressTypeIPv4, endpoints("10.0", 1), nil))))
	if out.Service != nil {
		t.Errorf("headless has a derived Service")
	}
	if out.Import.Spec.Ports == nil {
		t.Errorf("ports null, want []")
	}
	// A member's own Service of the name must not take the ClusterSet's
	// endpoints.
	if _, ok := out.EndpointSlices[0].Labels[discoveryv1.LabelServiceName]; ok {
		t.Errorf("headless slice names a Service: %v", out.EndpointSlices[0].Labels)
	}
}

func TestRenderGroupsAndChunks(t *testing.T) {
	v6Port := []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](9090), Protocol: ptr.To(corev1.ProtocolTCP)}}
	reordered := []discoveryv1.EndpointPort{{Name: ptr.To("b"), Port: ptr.To[int32](2)}, {Name: ptr.To("a"), Port: ptr.To[int32](1)}}
	sorted := []discoveryv1.EndpointPort{{Name: ptr.To("a"), Port: ptr.To[int32](1)}, {Name: ptr.To("b"), Port: ptr.To[int32](2)}}
	out := render(t, export("a", 0, withSlices(
		// 3 source slices of 60 with the same ports: 180 endpoints, 2 slices.
		slice("s3", discoveryv1.AddressTypeIPv4, endpoints("10.3", 60), httpPort),
		slice("s1", discoveryv1.AddressTypeIPv4, endpoints("10.1", 60), httpPort),
		slice("s2", discoveryv1.AddressTypeIPv4, endpoints("10.2", 60), httpPort),
		// Other ports: a slice of their own.
		slice("s4", discoveryv1.AddressTypeIPv4, endpoints("10.4", 1), v6Port),
		// Another address type: a slice of its own, after IPv4.
		slice("s5", discoveryv1.AddressTypeIPv6, []discoveryv1.Endpoint{{Addresses: []string{"fd00::1"}}}, httpPort),
		// The same ports in another order share a slice.
		slice("s6", discoveryv1.AddressTypeIPv4, endpoints("10.6", 1), reordered),
		slice("s7", discoveryv1.AddressTypeIPv4, endpoints("10.7", 1), sorted),
		// No endpoints: nothing to import.
		slice("s8", discoveryv1.AddressTypeFQDN, nil, httpPort),
	)))
	var got []string
	for _, s := range out.EndpointSlices {
		got = append(got, fmt.Sprintf("%s %s %d", s.Name, s.AddressType, len(s.Endpoints)))
	}
	want := []string{"svc.a.0 IPv4 2", "svc.a.1 IPv4 100", "svc.a.2 IPv4 80", "svc.a.3 IPv4 1", "svc.a.4 IPv6 1"}
	if !slices.Equal(got, want) {
		t.Errorf("slices\n%v, want\n%v", got, want)
	}
	// Source slices are read in name order, whatever the list's order.
	if a := out.EndpointSlices[1].Endpoints[0].Addresses[0]; a != "10.1.0.0" {
		t.Errorf("first endpoint %s, want s1's", a)
	}
}

func TestRenderErrors(t *testing.T) {
	many := make([]mcv1alpha1.ExportedEndpointSlice, 0, 70)
	for i := range 63 {
		many = append(many, slice(fmt.Sprintf("s%02d", i), discoveryv1.AddressTypeIPv4, endpoints(fmt.Sprintf("10.%d", i), 1),
			[]discoveryv1.EndpointPort{{Port: ptr.To(int32(1000 + i))}}))
	}
	for _, tc := range []struct {
		name      string
		ns, svc   string
		exports   []spec
		stale     []spec // merged instead of exports
		wantError string
	}{
		{name: "more than a Work holds", exports: []spec{export("a", 0, withSlices(many...))}, wantError: "needs 65 manifests"},
		{name: "just fits", exports: []spec{export("a", 0, withSlices(many[:62]...))}},
		{name: "headless fits one more", exports: []spec{export("a", 0, headless, withSlices(many...))}},
		{name: "unnamed ports in a union", exports: []spec{export("a", 0, ports(port("", 80, "TCP"))), export("b", 1, ports(port("", 81, "TCP")))},
			wantError: "needs names"},
		{name: "two names for one port", exports: []spec{export("a", 0), export("b", 1, ports(port("web", 80, "TCP")))},
			wantError: "defined twice"},
		{name: "no ports", exports: []spec{export("a", 0, ports())}, wantError: "no ports"},
		{name: "invalid name", svc: "Svc", exports: []spec{export("a", 0, func(s *spec) { s.Name = "Svc" })}, wantError: "service name"},
		{name: "an export of another Service", exports: []spec{export("a", 0, func(s *spec) { s.Name = "other" })}, wantError: "not ns/svc"},
		{name: "a cluster twice", exports: []spec{export("a", 0), export("a", 1)}, wantError: "twice"},
		{name: "a stale merge", exports: []spec{export("a", 0), export("b", 1)}, stale: []spec{export("a", 0)}, wantError: "the merge is of clusters [a]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, svc := cmpOr(tc.ns, "ns"), cmpOr(tc.svc, "svc")
			merged := tc.exports
			if tc.stale != nil {
				merged = tc.stale
			}
			_, err := Render(ns, svc, Merge(merged), tc.exports)
			if tc.wantError == "" && err != nil || tc.wantError != "" && (err == nil || !strings.Contains(err.Error(), tc.wantError)) {
				t.Errorf("error %v, want %q", err, tc.wantError)
			}
		})
	}
	if out, err := Render("ns", "svc", Merged{}, nil); err != nil || out.Import != nil || out.Objects() != nil {
		t.Errorf("no exports: %+v, %v", out, err)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, n := range []string{"a", long, "x-y"} {
		if d := DerivedServiceName(n); len(validation.IsDNS1035Label(d)) > 0 || d != DerivedServiceName(n) || d == n {
			t.Errorf("DerivedServiceName(%q) = %q", n, d)
		}
	}
	// Dashes would make these the same; dots keep them apart.
	if sliceName("a-b", "c", 0) == sliceName("a", "b-c", 0) {
		t.Error("slice names collide across Services")
	}
	for _, c := range []string{"UPPER", long + "." + long + "." + long + "." + long, "", "a_b"} {
		s := sliceName(long, c, 12)
		if len(validation.IsDNS1123Subdomain(s)) > 0 || s == sliceName(long, c+"x", 12) {
			t.Errorf("sliceName(%q) = %q", c, s)
		}
	}
}

func FuzzRender(f *testing.F) {
	f.Add("svc", []byte{3, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1}, []byte{5, 120, 7, 1})
	f.Add("a-b", []byte{2, 4, 1, 0, 1, 1}, []byte{250, 250, 3, 0, 9})
	f.Fuzz(func(t *testing.T, name string, data, sizes []byte) {
		if len(validation.IsDNS1035Label(name)) > 0 {
			t.Skip()
		}
		exports := fuzzExports(data)
		for i := range exports {
			exports[i].Name = name
			for j, n := range sizes {
				exports[i].EndpointSlices = append(exports[i].EndpointSlices, slice(fmt.Sprintf("s%d", j),
					[]discoveryv1.AddressType{"IPv4", "IPv6"}[n%2], endpoints(fmt.Sprintf("%s.%d", exports[i].Cluster, j), int(n)),
					[]discoveryv1.EndpointPort{{Port: ptr.To(int32(n % 3))}}))
			}
		}
		m := Merge(exports)
		out, err := Render("ns", name, m, exports)
		if err != nil {
			t.Skip() // Not importable (the tests above check why); nothing to check.
		}
		again, _ := Render("ns", name, m, slices.Clone(exports))
		if !equality.Semantic.DeepEqual(out, again) {
			t.Fatal("Render is not deterministic")
		}
		if out.Service != nil && len(validation.IsDNS1035Label(out.Service.Name)) > 0 {
			t.Fatalf("Service name %q", out.Service.Name)
		}
		names := map[string]bool{}
		seen := map[string]int{}
		for _, s := range out.EndpointSlices {
			if errs := validation.IsDNS1123Subdomain(s.Name); len(errs) > 0 || names[s.Name] {
				t.Fatalf("slice name %q: %v, or twice", s.Name, errs)
			}
			names[s.Name] = true
			if len(s.Endpoints) == 0 || len(s.Endpoints) > MaxEndpointsPerSlice {
				t.Fatalf("slice %s has %d endpoints", s.Name, len(s.Endpoints))
			}
			for _, ep := range s.Endpoints {
				seen[s.Labels[mcsv1beta1.LabelSourceCluster]+"/"+ep.Addresses[0]]++
			}
		}
		total := 0
		for _, e := range exports {
			for _, s := range e.EndpointSlices {
				for _, ep := range s.Endpoints {
					total++
					if k := e.Cluster + "/" + ep.Addresses[0]; seen[k] != 1 {
						t.Fatalf("endpoint %s imported %d times", k, seen[k])
					}
				}
			}
		}
		if total != len(seen) || len(out.Objects()) > MaxManifests {
			t.Fatalf("%d endpoints exported, %d imported, %d objects", total, len(seen), len(out.Objects()))
		}
	})
}
