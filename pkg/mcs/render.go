package mcs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
)

// Manifests are what every member of the ClusterSet receives for one
// Service. They carry no status: a Work applies specs.
type Manifests struct {
	Import *mcsv1beta1.ServiceImport
	// Service is the derived Service of a ClusterSetIP import; nil for
	// Headless, which has no IP to give.
	Service *corev1.Service
	// EndpointSlices are ordered by source cluster, then address type,
	// ports and number.
	EndpointSlices []*discoveryv1.EndpointSlice
}

// Objects are the manifests in the order they should be applied: the
// import first, so that the member's agent finds it when the derived
// Service appears.
func (m Manifests) Objects() []runtime.Object {
	if m.Import == nil {
		return nil
	}
	out := []runtime.Object{m.Import}
	if m.Service != nil {
		out = append(out, m.Service)
	}
	for _, s := range m.EndpointSlices {
		out = append(out, s)
	}
	return out
}

// Render is the manifests of the Service namespace/name, given m =
// Merge(exports). No exports, nothing to import: empty Manifests. An error
// says why the Service cannot be imported as it is; the exports' verdicts
// still stand.
func Render(namespace, name string, m Merged, exports []mcv1alpha1.ExportedServiceSpec) (Manifests, error) {
	if len(exports) == 0 {
		return Manifests{}, nil
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return Manifests{}, fmt.Errorf("namespace %q: %s", namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return Manifests{}, fmt.Errorf("service name %q: %s", name, strings.Join(errs, "; "))
	}
	sorted := slices.Clone(exports)
	slices.SortFunc(sorted, func(a, b mcv1alpha1.ExportedServiceSpec) int { return strings.Compare(a.Cluster, b.Cluster) })
	var clusters []string
	for i, e := range sorted {
		if e.Namespace != namespace || e.Name != name {
			return Manifests{}, fmt.Errorf("cluster %s exports %s/%s, not %s/%s", e.Cluster, e.Namespace, e.Name, namespace, name)
		}
		if i > 0 && sorted[i-1].Cluster == e.Cluster {
			return Manifests{}, fmt.Errorf("cluster %s exports %s/%s twice", e.Cluster, namespace, name)
		}
		clusters = append(clusters, e.Cluster)
	}
	// A merge of other exports would label the import with clusters whose
	// endpoints it does not carry.
	if !slices.Equal(clusters, m.Clusters) {
		return Manifests{}, fmt.Errorf("the merge is of clusters [%s], the exports are of [%s]",
			strings.Join(m.Clusters, ", "), strings.Join(clusters, ", "))
	}

	out := Manifests{Import: serviceImport(namespace, name, m)}
	// kube-proxy routes a Service's IP to the slices that name it; for
	// Headless nothing is routed, and naming the Service itself would add
	// the other clusters' endpoints to a member's own Service of that name
	// (its cluster.local DNS), so only the MCS label ties them.
	serviceName := ""
	if m.Import.Type == mcsv1beta1.ClusterSetIP {
		svc, err := derivedService(namespace, name, m.Import)
		if err != nil {
			return Manifests{}, err
		}
		out.Service = svc
		serviceName = svc.Name
	}
	for _, e := range sorted {
		out.EndpointSlices = append(out.EndpointSlices, endpointSlices(namespace, name, serviceName, e)...)
	}
	if n := len(out.Objects()); n > MaxManifests {
		return Manifests{}, fmt.Errorf("%s/%s needs %d manifests (%d EndpointSlices of up to %d endpoints); a Work holds %d",
			namespace, name, n, len(out.EndpointSlices), MaxEndpointsPerSlice, MaxManifests)
	}
	return out, nil
}

func serviceImport(namespace, name string, m Merged) *mcsv1beta1.ServiceImport {
	annotations := maps.Clone(m.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationClusters] = strings.Join(m.Clusters, ",")
	spec := *m.Import.DeepCopy()
	// Each member fills these from its own derived Service.
	spec.IPs, spec.IPFamilies = nil, nil
	// ports is required: an import without ports is [], not null.
	if spec.Ports == nil {
		spec.Ports = []mcsv1beta1.ServicePort{}
	}
	return &mcsv1beta1.ServiceImport{
		TypeMeta: metav1.TypeMeta{APIVersion: mcsv1beta1.GroupVersion.String(), Kind: mcsv1beta1.ServiceImportKindName},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: maps.Clone(m.Labels), Annotations: annotations},
		Spec: spec,
	}
}

// derivedService gives a ClusterSetIP import its IP in each member. It
// has no selector: its endpoints are the imported slices. Only what
// kube-proxy applies to every endpoint is copied: an internal traffic
// policy of Local would drop all traffic (imported endpoints name no
// node), and traffic distribution works through hints, which are dropped.
func derivedService(namespace, name string, spec mcsv1beta1.ServiceImportSpec) (*corev1.Service, error) {
	fail := func(why string) (*corev1.Service, error) {
		return nil, fmt.Errorf("%s/%s: no Service can give the clusterset IP: %s", namespace, name, why)
	}
	if len(spec.Ports) == 0 {
		return fail("it has no ports")
	}
	names, numbers := map[string]bool{}, map[string]bool{}
	var ports []corev1.ServicePort
	for _, p := range spec.Ports {
		// Conflicting exports can union into ports no Service accepts.
		if p.Name == "" && len(spec.Ports) > 1 {
			return fail(fmt.Sprintf("port %d/%s has no name, and a Service with several ports needs names", p.Port, p.Protocol))
		}
		num := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if names[p.Name] || numbers[num] {
			return fail(fmt.Sprintf("port %s (%s) is defined twice", p.Name, num))
		}
		names[p.Name], numbers[num] = true, true
		ports = append(ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, AppProtocol: clonePtr(p.AppProtocol),
			Port: p.Port, TargetPort: intstr.FromInt32(p.Port)})
	}
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: DerivedServiceName(name),
			Labels: map[string]string{mcsv1beta1.LabelServiceName: name}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports,
			SessionAffinity: spec.SessionAffinity, SessionAffinityConfig: spec.SessionAffinityConfig.DeepCopy()},
	}, nil
}

// group is the endpoints of one cluster's slices that share an address
// type and ports, which one slice may hold together.
type group struct {
	addressType discoveryv1.AddressType
	portsKey    string
	ports       []discoveryv1.EndpointPort
	endpoints   []discoveryv1.Endpoint
}

// endpointSlices is one export's endpoints as imported slices.
// serviceName is the kubernetes.io/service-name label, if any.
func endpointSlices(namespace, name, serviceName string, e mcv1alpha1.ExportedServiceSpec) []*discoveryv1.EndpointSlice {
	source := slices.Clone(e.EndpointSlices)
	slices.SortStableFunc(source, func(a, b mcv1alpha1.ExportedEndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	byKey := map[string]*group{}
	var groups []*group
	for _, s := range source {
		ports := copyPorts(s.Ports)
		k := string(s.AddressType) + "\x00" + portsKey(ports)
		g := byKey[k]
		if g == nil {
			g = &group{addressType: s.AddressType, portsKey: portsKey(ports), ports: ports}
			byKey[k] = g
			groups = append(groups, g)
		}
		for _, ep := range s.Endpoints {
			g.endpoints = append(g.endpoints, importedEndpoint(ep))
		}
	}
	slices.SortFunc(groups, func(a, b *group) int {
		return cmp.Or(strings.Compare(string(a.addressType), string(b.addressType)), strings.Compare(a.portsKey, b.portsKey))
	})
	var out []*discoveryv1.EndpointSlice
	for _, g := range groups {
		for chunk := range slices.Chunk(g.endpoints, MaxEndpointsPerSlice) {
			labels := map[string]string{
				mcsv1beta1.LabelServiceName:   name,
				mcsv1beta1.LabelSourceCluster: e.Cluster,
				discoveryv1.LabelManagedBy:    ManagedBy,
			}
			if serviceName != "" {
				labels[discoveryv1.LabelServiceName] = serviceName
			}
			out = append(out, &discoveryv1.EndpointSlice{
				TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sliceName(name, e.Cluster, len(out)),
					Labels: labels},
				AddressType: g.addressType,
				Endpoints:   chunk,
				Ports:       copyPorts(g.ports),
			})
		}
	}
	return out
}

// importedEndpoint keeps what holds in any cluster: addresses, conditions,
// hostname (headless DNS names endpoints by it) and zone. The node name
// and target ref name objects of the source cluster, and a node of the
// same name in the importing cluster would pass for the endpoint's under
// internalTrafficPolicy Local; hints are computed for the source
// cluster's zones and would make kube-proxy filter by them.
func importedEndpoint(ep discoveryv1.Endpoint) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses:  slices.Clone(ep.Addresses),
		Conditions: *ep.Conditions.DeepCopy(),
		Hostname:   clonePtr(ep.Hostname),
		Zone:       clonePtr(ep.Zone),
	}
}

// copyPorts is a deep copy of ports, sorted by name, number and protocol
// so that the same ports listed in another order share a slice.
func copyPorts(ports []discoveryv1.EndpointPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(ports))
	for _, p := range ports {
		out = append(out, *p.DeepCopy())
	}
	slices.SortStableFunc(out, func(a, b discoveryv1.EndpointPort) int {
		return cmp.Or(cmp.Compare(deref(a.Name), deref(b.Name)), cmp.Compare(deref(a.Port), deref(b.Port)),
			cmp.Compare(deref(a.Protocol), deref(b.Protocol)), cmp.Compare(deref(a.AppProtocol), deref(b.AppProtocol)))
	})
	return out
}

// portsKey identifies sorted ports; %q keeps a nil field apart from "".
func portsKey(ports []discoveryv1.EndpointPort) string {
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "%s %s %s %s;", opt(p.Name), opt(p.Port), opt(p.Protocol), opt(p.AppProtocol))
	}
	return b.String()
}

func opt[T any](p *T) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%q", fmt.Sprint(*p))
}

func deref[T cmp.Ordered](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
