package serviceexport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

// exportOf reads one ServiceExport of a member: the export to report to the
// hub, or nil and the Valid condition saying why the export is not valid
// (the KEP's reasons: no Service of that name, or an ExternalName Service,
// which has no endpoints to export). slices are the member's EndpointSlices
// of the Service's namespace; those of the Service (by the
// kubernetes.io/service-name label) are exported, except the ones Shepherd
// itself wrote for an import, which would otherwise echo back.
func exportOf(cluster string, se *mcsv1beta1.ServiceExport, svc *corev1.Service, epSlices []*discoveryv1.EndpointSlice) (*mcv1alpha1.ExportedServiceSpec, metav1.Condition) {
	valid := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionValid), ObservedGeneration: se.Generation}
	switch {
	case svc == nil:
		valid.Status, valid.Reason = metav1.ConditionFalse, string(mcsv1beta1.ServiceExportReasonNoService)
		valid.Message = fmt.Sprintf("no Service %s/%s in this cluster: create it, or delete the ServiceExport", se.Namespace, se.Name)
		return nil, valid
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		valid.Status, valid.Reason = metav1.ConditionFalse, string(mcsv1beta1.ServiceExportReasonInvalidServiceType)
		valid.Message = fmt.Sprintf("Service %s/%s is of type ExternalName, which has no endpoints to export: export a ClusterIP or headless Service", se.Namespace, se.Name)
		return nil, valid
	}
	valid.Status, valid.Reason, valid.Message = metav1.ConditionTrue, string(mcsv1beta1.ServiceExportReasonValid), "the Service is exported"

	spec := &mcv1alpha1.ExportedServiceSpec{
		Cluster:               cluster,
		Namespace:             se.Namespace,
		Name:                  se.Name,
		ExportedAt:            se.CreationTimestamp,
		Type:                  mcsv1beta1.ClusterSetIP,
		SessionAffinity:       svc.Spec.SessionAffinity,
		SessionAffinityConfig: svc.Spec.SessionAffinityConfig,
		IPFamilies:            svc.Spec.IPFamilies,
		InternalTrafficPolicy: svc.Spec.InternalTrafficPolicy,
		TrafficDistribution:   svc.Spec.TrafficDistribution,
		ExportedLabels:        se.Spec.ExportedLabels,
		ExportedAnnotations:   se.Spec.ExportedAnnotations,
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		spec.Type = mcsv1beta1.Headless
	}
	for _, p := range svc.Spec.Ports {
		spec.Ports = append(spec.Ports, mcsv1beta1.ServicePort{Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol, Port: p.Port})
	}
	own := slices.DeleteFunc(slices.Clone(epSlices), func(s *discoveryv1.EndpointSlice) bool {
		return s.Namespace != se.Namespace || s.Labels[discoveryv1.LabelServiceName] != se.Name || s.Labels[discoveryv1.LabelManagedBy] == mcs.ManagedBy
	})
	slices.SortFunc(own, func(a, b *discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	for _, s := range own {
		spec.EndpointSlices = append(spec.EndpointSlices, mcv1alpha1.ExportedEndpointSlice{
			Name: s.Name, AddressType: s.AddressType, Endpoints: s.Endpoints, Ports: s.Ports,
		})
	}
	return spec, valid
}

// exportConditions are a ServiceExport's conditions: Valid from the member,
// Ready and Conflict from the hub's verdict on the reported export (hub nil:
// not reported yet). A verdict on older properties (ports, type, ...) than
// the ones reported leaves Ready False (Pending) until the hub catches up;
// one on older endpoints only still holds: an endpoint change (a pod
// restarted) does not take the export out of Ready.
func exportConditions(valid metav1.Condition, hub *mcv1alpha1.ExportedService, reported *mcv1alpha1.ExportedServiceSpec) []metav1.Condition {
	out := []metav1.Condition{valid}
	ready := metav1.Condition{Type: string(mcsv1beta1.ServiceExportConditionReady), Status: metav1.ConditionFalse, ObservedGeneration: valid.ObservedGeneration}
	switch {
	case valid.Status != metav1.ConditionTrue:
		ready.Reason, ready.Message = string(mcsv1beta1.ServiceExportReasonFailed), "the export is not valid (see the Valid condition)"
		return append(out, ready)
	case hub == nil || !sameProperties(&hub.Spec, reported) || hub.Status.ObservedGeneration < propertiesGeneration(hub):
		ready.Reason, ready.Message = string(mcsv1beta1.ServiceExportReasonPending), "waiting for the hub to merge this export into the ClusterSet's ServiceImport"
		return append(out, ready)
	}
	for _, t := range []string{mcv1alpha1.ConditionReady, mcv1alpha1.ConditionConflict} {
		if c := meta.FindStatusCondition(hub.Status.Conditions, t); c != nil {
			out = append(out, metav1.Condition{Type: t, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: valid.ObservedGeneration})
		}
	}
	return out
}

// importFill is what a member adds to a ServiceImport the hub sent: for a
// ClusterSetIP import, the cluster IPs and families of its derived Service
// (nil while the Service has none yet); for a Headless one no IP, and the
// families of the endpoints imported (the address types of the imported
// EndpointSlices), which is what a client of the Headless import can
// reach. The exporting clusters come from the import's annotation.
func importFill(si *mcsv1beta1.ServiceImport, derived *corev1.Service, imported []*discoveryv1.EndpointSlice) (ips []string, families []corev1.IPFamily, clusters []mcsv1beta1.ClusterStatus) {
	switch {
	case si.Spec.Type == mcsv1beta1.ClusterSetIP && derived != nil:
		for _, ip := range derived.Spec.ClusterIPs {
			if ip != "" && ip != corev1.ClusterIPNone {
				ips = append(ips, ip)
			}
		}
		if len(ips) == len(derived.Spec.IPFamilies) {
			families = derived.Spec.IPFamilies
		} else {
			ips = nil
		}
	case si.Spec.Type == mcsv1beta1.Headless:
		for _, f := range []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol} {
			if slices.ContainsFunc(imported, func(s *discoveryv1.EndpointSlice) bool { return string(s.AddressType) == string(f) }) {
				families = append(families, f)
			}
		}
	}
	for c := range strings.SplitSeq(si.Annotations[mcs.AnnotationClusters], ",") {
		if c != "" {
			clusters = append(clusters, mcsv1beta1.ClusterStatus{Cluster: c})
		}
	}
	return ips, families, clusters
}

// sameProperties: two reports of one export agree on everything the hub
// merges but the endpoints.
func sameProperties(a, b *mcv1alpha1.ExportedServiceSpec) bool {
	x, y := *a, *b
	x.EndpointSlices, y.EndpointSlices = nil, nil
	return equality.Semantic.DeepEqual(&x, &y)
}

// propertiesGeneration is the generation at which an ExportedService's
// properties last changed (AnnotationPropertiesGeneration); without a
// readable annotation, its generation: any change may be one of them.
func propertiesGeneration(es *mcv1alpha1.ExportedService) int64 {
	g, err := strconv.ParseInt(es.Annotations[mcv1alpha1.AnnotationPropertiesGeneration], 10, 64)
	if err != nil || g <= 0 || g > es.Generation {
		return es.Generation
	}
	return g
}
