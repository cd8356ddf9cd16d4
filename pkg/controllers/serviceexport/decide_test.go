package serviceexport

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

var t0 = time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)

func serviceExport(gen int64) *mcsv1beta1.ServiceExport {
	return &mcsv1beta1.ServiceExport{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: gen, CreationTimestamp: metav1.NewTime(t0)},
		Spec: mcsv1beta1.ServiceExportSpec{
			ExportedLabels:      map[string]string{"tier": "front"},
			ExportedAnnotations: map[string]string{"owner": "team-a"},
		},
	}
}

func service(clusterIP string, typ corev1.ServiceType) *corev1.Service {
	local := corev1.ServiceInternalTrafficPolicyLocal
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: corev1.ServiceSpec{
			Type:      typ,
			ClusterIP: clusterIP,
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)},
				{Name: "grpc", Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("kubernetes.io/h2c"), Port: 9090},
			},
			SessionAffinity:       corev1.ServiceAffinityClientIP,
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}},
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol},
			InternalTrafficPolicy: &local,
			TrafficDistribution:   ptr.To("PreferClose"),
		},
	}
}

// slice is an EndpointSlice in namespace ns labeled for service, managed by
// managedBy ("" for none), with one endpoint at addr.
func slice(ns, name, service, managedBy, addr string) *discoveryv1.EndpointSlice {
	labels := map[string]string{}
	if service != "" {
		labels[discoveryv1.LabelServiceName] = service
	}
	if managedBy != "" {
		labels[discoveryv1.LabelManagedBy] = managedBy
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

func TestExportOf(t *testing.T) {
	const controller = "endpointslice-controller.k8s.io"
	for _, tc := range []struct {
		name   string
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		// want: nil spec and this Valid reason, with message containing why
		// (each piece); or a spec of typ with these slices.
		reason    mcsv1beta1.ServiceExportConditionReason
		why       []string
		typ       mcsv1beta1.ServiceImportType
		sliceList []string
	}{
		{name: "no Service: not valid, the message names it and the fix",
			reason: mcsv1beta1.ServiceExportReasonNoService, why: []string{"shop/web", "create it", "delete the ServiceExport"}},
		{name: "an ExternalName Service has no endpoints to export", svc: service("", corev1.ServiceTypeExternalName),
			reason: mcsv1beta1.ServiceExportReasonInvalidServiceType, why: []string{"shop/web", "ExternalName"}},
		{name: "a ClusterIP Service is a ClusterSetIP export", svc: service("10.0.0.7", corev1.ServiceTypeClusterIP),
			reason: mcsv1beta1.ServiceExportReasonValid, typ: mcsv1beta1.ClusterSetIP},
		{name: "a NodePort Service is a ClusterSetIP export too", svc: service("10.0.0.7", corev1.ServiceTypeNodePort),
			reason: mcsv1beta1.ServiceExportReasonValid, typ: mcsv1beta1.ClusterSetIP},
		{name: "clusterIP None is Headless", svc: service(corev1.ClusterIPNone, corev1.ServiceTypeClusterIP),
			reason: mcsv1beta1.ServiceExportReasonValid, typ: mcsv1beta1.Headless},
		{name: "only the Service's own slices, sorted by name whatever the input order",
			svc: service("10.0.0.7", corev1.ServiceTypeClusterIP),
			slices: []*discoveryv1.EndpointSlice{
				slice("shop", "web-zz", "web", controller, "10.1.0.3"),
				slice("shop", "other-1", "other", controller, "10.1.0.9"),
				slice("shop", "web-aa", "web", controller, "10.1.0.1"),
				slice("shop", "web-mm", "web", "", "10.1.0.2"),
				slice("elsewhere", "web-bb", "web", controller, "10.1.0.8"),
				slice("shop", "unlabeled", "", controller, "10.1.0.10"),
			},
			reason: mcsv1beta1.ServiceExportReasonValid, typ: mcsv1beta1.ClusterSetIP, sliceList: []string{"web-aa", "web-mm", "web-zz"}},
		{name: "imported slices (managed by Shepherd) never echo back",
			svc: service(corev1.ClusterIPNone, corev1.ServiceTypeClusterIP),
			slices: []*discoveryv1.EndpointSlice{
				slice("shop", "web.m2.0", "web", mcs.ManagedBy, "10.2.0.1"),
				slice("shop", "web-aa", "web", controller, "10.1.0.1"),
			},
			reason: mcsv1beta1.ServiceExportReasonValid, typ: mcsv1beta1.Headless, sliceList: []string{"web-aa"}},
		{name: "only imported slices: none exported",
			svc:    service("10.0.0.7", corev1.ServiceTypeClusterIP),
			slices: []*discoveryv1.EndpointSlice{slice("shop", "web.m2.0", "web", mcs.ManagedBy, "10.2.0.1")},
			reason: mcsv1beta1.ServiceExportReasonValid, typ: mcsv1beta1.ClusterSetIP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			se := serviceExport(3)
			in := slices.Clone(tc.slices)
			spec, valid := exportOf("m1", se, tc.svc, tc.slices)
			if valid.Type != string(mcsv1beta1.ServiceExportConditionValid) || valid.Reason != string(tc.reason) || valid.ObservedGeneration != 3 {
				t.Fatalf("valid = %+v, want reason %s at generation 3", valid, tc.reason)
			}
			for _, w := range tc.why {
				if !strings.Contains(valid.Message, w) {
					t.Errorf("message %q does not contain %q", valid.Message, w)
				}
			}
			if !slices.Equal(tc.slices, in) {
				t.Errorf("the input slices were reordered")
			}
			if tc.reason != mcsv1beta1.ServiceExportReasonValid {
				if valid.Status != metav1.ConditionFalse || spec != nil {
					t.Fatalf("valid %s spec %+v, want False and no spec", valid.Status, spec)
				}
				return
			}
			if valid.Status != metav1.ConditionTrue || spec == nil {
				t.Fatalf("valid %s spec %v, want True and a spec", valid.Status, spec)
			}
			if spec.Cluster != "m1" || spec.Namespace != "shop" || spec.Name != "web" || spec.Type != tc.typ {
				t.Errorf("spec identity %s %s/%s %s, want m1 shop/web %s", spec.Cluster, spec.Namespace, spec.Name, spec.Type, tc.typ)
			}
			if !spec.ExportedAt.Equal(&se.CreationTimestamp) {
				t.Errorf("exportedAt %v, want the ServiceExport's creation %v", spec.ExportedAt, se.CreationTimestamp)
			}
			wantPorts := []mcsv1beta1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
				{Name: "grpc", Protocol: corev1.ProtocolTCP, AppProtocol: ptr.To("kubernetes.io/h2c"), Port: 9090},
			}
			if !slices.EqualFunc(spec.Ports, wantPorts, func(a, b mcsv1beta1.ServicePort) bool {
				return a.Name == b.Name && a.Protocol == b.Protocol && a.Port == b.Port && ptr.Deref(a.AppProtocol, "") == ptr.Deref(b.AppProtocol, "")
			}) {
				t.Errorf("ports %+v, want %+v", spec.Ports, wantPorts)
			}
			if spec.SessionAffinity != corev1.ServiceAffinityClientIP || spec.SessionAffinityConfig == nil ||
				*spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != 60 {
				t.Errorf("affinity %s %+v", spec.SessionAffinity, spec.SessionAffinityConfig)
			}
			if !slices.Equal(spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}) {
				t.Errorf("ipFamilies %v", spec.IPFamilies)
			}
			if ptr.Deref(spec.InternalTrafficPolicy, "") != corev1.ServiceInternalTrafficPolicyLocal || ptr.Deref(spec.TrafficDistribution, "") != "PreferClose" {
				t.Errorf("traffic policy %v distribution %v", spec.InternalTrafficPolicy, spec.TrafficDistribution)
			}
			if spec.ExportedLabels["tier"] != "front" || spec.ExportedAnnotations["owner"] != "team-a" {
				t.Errorf("exported labels %v annotations %v", spec.ExportedLabels, spec.ExportedAnnotations)
			}
			var got []string
			for _, s := range spec.EndpointSlices {
				got = append(got, s.Name)
				if s.AddressType != discoveryv1.AddressTypeIPv4 || len(s.Endpoints) != 1 || len(s.Ports) != 1 {
					t.Errorf("slice %s not copied: %+v", s.Name, s)
				}
			}
			if !slices.Equal(got, tc.sliceList) {
				t.Errorf("exported slices %v, want %v", got, tc.sliceList)
			}
		})
	}
}

// reportedSpec is a valid export's spec as the member reports it.
func reportedSpec() *mcv1alpha1.ExportedServiceSpec {
	spec, _ := exportOf("m1", serviceExport(4), service("10.0.0.7", corev1.ServiceTypeClusterIP),
		[]*discoveryv1.EndpointSlice{slice("shop", "web-aa", "web", "", "10.1.0.1")})
	return spec
}

// hubVerdict is the hub's ExportedService for spec at generation gen,
// having observed observed, with these conditions.
func hubVerdict(spec *mcv1alpha1.ExportedServiceSpec, gen, observed int64, conds ...metav1.Condition) *mcv1alpha1.ExportedService {
	return &mcv1alpha1.ExportedService{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shepherd-es-m1", Name: "shop.web", Generation: gen},
		Spec:       *spec.DeepCopy(),
		Status:     mcv1alpha1.ExportedServiceStatus{ObservedGeneration: observed, Conditions: conds},
	}
}

func withPropertiesGeneration(es *mcv1alpha1.ExportedService, g string) *mcv1alpha1.ExportedService {
	es.Annotations = map[string]string{mcv1alpha1.AnnotationPropertiesGeneration: g}
	return es
}

func TestExportConditions(t *testing.T) {
	validTrue := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionValid), Status: metav1.ConditionTrue,
		Reason: string(mcsv1beta1.ServiceExportReasonValid), ObservedGeneration: 4}
	validFalse := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionValid), Status: metav1.ConditionFalse,
		Reason: string(mcsv1beta1.ServiceExportReasonNoService), ObservedGeneration: 4}
	hubReady := metav1.Condition{Type: mcv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: string(mcsv1beta1.ServiceExportReasonExported),
		Message: "exported", ObservedGeneration: 7}
	hubConflict := metav1.Condition{Type: mcv1alpha1.ConditionConflict, Status: metav1.ConditionTrue, Reason: string(mcsv1beta1.ServiceExportReasonPortConflict),
		Message: "conflicting ports", ObservedGeneration: 7}
	spec := reportedSpec()
	changed := reportedSpec()
	changed.Ports = changed.Ports[:1]
	// The hub's copy went through JSON: nil and empty agree.
	roundTripped := reportedSpec()
	roundTripped.ExportedAnnotations = nil
	spec.ExportedAnnotations = map[string]string{}
	moreEndpoints := reportedSpec()
	moreEndpoints.EndpointSlices[0].Endpoints = append(moreEndpoints.EndpointSlices[0].Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.1.0.2"}})

	type want struct {
		ready, conflict *metav1.Condition // nil: absent
	}
	for _, tc := range []struct {
		name     string
		valid    metav1.Condition
		hub      *mcv1alpha1.ExportedService
		reported *mcv1alpha1.ExportedServiceSpec
		want     want
	}{
		{name: "invalid: Ready False Failed", valid: validFalse, hub: hubVerdict(spec, 7, 7, hubReady, hubConflict),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonFailed)}}},
		{name: "not reported yet: Pending", valid: validTrue, reported: spec,
			want: want{ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonPending)}}},
		{name: "the hub has not observed the latest report: Pending", valid: validTrue, reported: spec,
			hub:  hubVerdict(spec, 8, 7, hubReady, hubConflict),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonPending)}}},
		{name: "the hub holds another spec than the one reported: Pending", valid: validTrue, reported: changed,
			hub:  hubVerdict(spec, 7, 7, hubReady, hubConflict),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonPending)}}},
		{name: "the hub's verdict on this report: Ready and Conflict copied", valid: validTrue, reported: spec,
			hub: hubVerdict(roundTripped, 7, 7, hubReady, hubConflict),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionTrue, Reason: string(mcsv1beta1.ServiceExportReasonExported), Message: "exported"},
				conflict: &metav1.Condition{Status: metav1.ConditionTrue, Reason: string(mcsv1beta1.ServiceExportReasonPortConflict), Message: "conflicting ports"}}},
		{name: "a verdict without conditions copies none", valid: validTrue, reported: spec, hub: hubVerdict(spec, 7, 7)},
		{name: "only endpoints changed since the verdict: it still holds", valid: validTrue, reported: moreEndpoints,
			hub:  withPropertiesGeneration(hubVerdict(moreEndpoints, 8, 7, hubReady), "7"),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionTrue, Reason: string(mcsv1beta1.ServiceExportReasonExported), Message: "exported"}}},
		{name: "endpoints reported but not stored yet: the verdict still holds", valid: validTrue, reported: moreEndpoints,
			hub:  withPropertiesGeneration(hubVerdict(reportedSpec(), 7, 7, hubReady), "7"),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionTrue, Reason: string(mcsv1beta1.ServiceExportReasonExported), Message: "exported"}}},
		{name: "properties changed after the verdict: Pending", valid: validTrue, reported: changed,
			hub:  withPropertiesGeneration(hubVerdict(changed, 8, 7, hubReady), "8"),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonPending)}}},
		{name: "an unreadable properties generation counts as the generation: Pending", valid: validTrue, reported: spec,
			hub:  withPropertiesGeneration(hubVerdict(spec, 8, 7, hubReady), "x"),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonPending)}}},
		{name: "a properties generation beyond the generation counts as the generation: Pending", valid: validTrue, reported: spec,
			hub:  withPropertiesGeneration(hubVerdict(spec, 8, 7, hubReady), "9"),
			want: want{ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonPending)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := exportConditions(tc.valid, tc.hub, tc.reported)
			if len(got) == 0 || got[0] != tc.valid {
				t.Fatalf("conditions %+v do not start with Valid %+v", got, tc.valid)
			}
			n := 1
			for typ, w := range map[string]*metav1.Condition{mcv1alpha1.ConditionReady: tc.want.ready, mcv1alpha1.ConditionConflict: tc.want.conflict} {
				c := meta.FindStatusCondition(got, typ)
				if w == nil {
					if c != nil {
						t.Errorf("%s = %+v, want none", typ, c)
					}
					continue
				}
				n++
				if c == nil {
					t.Errorf("no %s condition in %+v", typ, got)
					continue
				}
				if c.Status != w.Status || c.Reason != w.Reason || (w.Message != "" && c.Message != w.Message) {
					t.Errorf("%s = %s %s %q, want %s %s %q", typ, c.Status, c.Reason, c.Message, w.Status, w.Reason, w.Message)
				}
				if c.ObservedGeneration != 4 {
					t.Errorf("%s observedGeneration %d, want the ServiceExport's 4", typ, c.ObservedGeneration)
				}
			}
			if len(got) != n {
				t.Errorf("%d conditions, want %d: %+v", len(got), n, got)
			}
		})
	}
}

func TestImportFill(t *testing.T) {
	derived := func(ips []string, families ...corev1.IPFamily) *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{ClusterIPs: ips, IPFamilies: families}}
	}
	for _, tc := range []struct {
		name      string
		typ       mcsv1beta1.ServiceImportType
		clusters  *string // the annotation; nil: absent
		derived   *corev1.Service
		ips       []string
		families  []corev1.IPFamily
		exporters []string
		imported  []discoveryv1.AddressType // address types of the imported slices
	}{
		{name: "ClusterSetIP takes the derived Service's IPs and families", typ: mcsv1beta1.ClusterSetIP, clusters: ptr.To("m1,m2"),
			derived: derived([]string{"10.96.0.5"}, corev1.IPv4Protocol),
			ips:     []string{"10.96.0.5"}, families: []corev1.IPFamily{corev1.IPv4Protocol}, exporters: []string{"m1", "m2"}},
		{name: "dual stack", typ: mcsv1beta1.ClusterSetIP, clusters: ptr.To("m1"),
			derived: derived([]string{"10.96.0.5", "fd00::5"}, corev1.IPv4Protocol, corev1.IPv6Protocol),
			ips:     []string{"10.96.0.5", "fd00::5"}, families: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}, exporters: []string{"m1"}},
		{name: "no derived Service yet: no IPs", typ: mcsv1beta1.ClusterSetIP, clusters: ptr.To("m1"), exporters: []string{"m1"}},
		{name: "a derived Service without IPs yet: no IPs", typ: mcsv1beta1.ClusterSetIP, clusters: ptr.To("m1"),
			derived: derived(nil), exporters: []string{"m1"}},
		{name: "IPs and families of different lengths: no IPs", typ: mcsv1beta1.ClusterSetIP, clusters: ptr.To("m1"),
			derived: derived([]string{"10.96.0.5", "fd00::5"}, corev1.IPv4Protocol), exporters: []string{"m1"}},
		{name: "a None cluster IP is no IP", typ: mcsv1beta1.ClusterSetIP, clusters: ptr.To("m1"),
			derived: derived([]string{corev1.ClusterIPNone}, corev1.IPv4Protocol), exporters: []string{"m1"}},
		{name: "Headless: no IPs even with a Service of that name", typ: mcsv1beta1.Headless, clusters: ptr.To("m1"),
			derived: derived([]string{"10.96.0.5"}, corev1.IPv4Protocol), exporters: []string{"m1"}},
		{name: "Headless: the families of the imported endpoints", typ: mcsv1beta1.Headless, clusters: ptr.To("m1,m2"),
			imported: []discoveryv1.AddressType{discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN, discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv4},
			families: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}, exporters: []string{"m1", "m2"}},
		{name: "ClusterSetIP: families from the derived Service, never from the slices", typ: mcsv1beta1.ClusterSetIP, clusters: ptr.To("m1"),
			imported: []discoveryv1.AddressType{discoveryv1.AddressTypeIPv6}, exporters: []string{"m1"}},
		{name: "empty pieces of the annotation are skipped", typ: mcsv1beta1.Headless, clusters: ptr.To(",m1,,m2,"),
			exporters: []string{"m1", "m2"}},
		{name: "an empty annotation is no cluster", typ: mcsv1beta1.Headless, clusters: ptr.To("")},
		{name: "no annotation is no cluster", typ: mcsv1beta1.Headless},
	} {
		t.Run(tc.name, func(t *testing.T) {
			si := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
				Spec: mcsv1beta1.ServiceImportSpec{Type: tc.typ}}
			if tc.clusters != nil {
				si.Annotations = map[string]string{mcs.AnnotationClusters: *tc.clusters}
			}
			var imported []*discoveryv1.EndpointSlice
			for _, at := range tc.imported {
				imported = append(imported, &discoveryv1.EndpointSlice{AddressType: at})
			}
			ips, families, clusters := importFill(si, tc.derived, imported)
			if !slices.Equal(ips, tc.ips) || !slices.Equal(families, tc.families) {
				t.Errorf("ips %v families %v, want %v %v", ips, families, tc.ips, tc.families)
			}
			if tc.typ == mcsv1beta1.ClusterSetIP && len(ips) != len(families) {
				t.Errorf("%d IPs for %d families", len(ips), len(families))
			}
			var got []string
			for _, c := range clusters {
				got = append(got, c.Cluster)
			}
			if !slices.Equal(got, tc.exporters) {
				t.Errorf("clusters %v, want %v", got, tc.exporters)
			}
		})
	}
}
