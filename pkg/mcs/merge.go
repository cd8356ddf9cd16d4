package mcs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
)

// Merged is the ClusterSet's view of one Service: what its exports agree
// on (or what the oldest export says), and the verdict on each export.
type Merged struct {
	// Import is the ServiceImport's spec. IPs and IPFamilies are left
	// empty: they come from the derived Service in each member.
	Import mcsv1beta1.ServiceImportSpec
	// Labels and Annotations are the oldest export's exported labels and
	// annotations, for the ServiceImport.
	Labels, Annotations map[string]string
	// Winner is the cluster of the oldest export, which decided every
	// property but the ports.
	Winner string
	// Clusters are the exporting clusters, sorted.
	Clusters []string
	// Verdicts is the Conflict condition of each export, by cluster.
	Verdicts map[string]Verdict
}

// Verdict is the Conflict condition of one export.
type Verdict struct {
	Conflict bool
	// Reason is a ServiceExport reason: NoConflicts, or the first
	// conflicting property's (conflictOrder).
	Reason  mcsv1beta1.ServiceExportConditionReason
	Message string
}

// Condition is v as the export's Conflict condition. LastTransitionTime is
// left to meta.SetStatusCondition, which keeps it while the status holds.
func (v Verdict) Condition(generation int64) metav1.Condition {
	status := metav1.ConditionFalse
	if v.Conflict {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: mcv1alpha1.ConditionConflict, Status: status, Reason: string(v.Reason),
		Message: v.Message, ObservedGeneration: generation}
}

// property is one property of an export the ServiceImport takes from the
// oldest export; differs says whether e disagrees with the oldest, w.
type property struct {
	name    string
	reason  mcsv1beta1.ServiceExportConditionReason
	differs func(w, e *mcv1alpha1.ExportedServiceSpec) bool
}

// conflictOrder is the order in which properties are checked: the reason
// of a conflicted Service is that of the first property in it that
// conflicts. Type comes first, as it changes what the import is at all;
// then ports, which decide whether clients can reach it.
var conflictOrder = []property{
	{"type", mcsv1beta1.ServiceExportReasonTypeConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return w.Type != e.Type
	}},
	{"ports", mcsv1beta1.ServiceExportReasonPortConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return !slices.EqualFunc(portSet(w.Ports), portSet(e.Ports), portEqual)
	}},
	{"sessionAffinity", mcsv1beta1.ServiceExportReasonSessionAffinityConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return affinity(w.SessionAffinity) != affinity(e.SessionAffinity)
	}},
	{"sessionAffinityConfig", mcsv1beta1.ServiceExportReasonSessionAffinityConfigConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return !ptrEqual(clientIPTimeout(w.SessionAffinityConfig), clientIPTimeout(e.SessionAffinityConfig))
	}},
	{"internalTrafficPolicy", mcsv1beta1.ServiceExportReasonInternalTrafficPolicyConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return !ptrEqual(w.InternalTrafficPolicy, e.InternalTrafficPolicy)
	}},
	{"trafficDistribution", mcsv1beta1.ServiceExportReasonTrafficDistributionConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return !ptrEqual(w.TrafficDistribution, e.TrafficDistribution)
	}},
	// Order matters for IP families: the first is the primary.
	{"ipFamilies", mcsv1beta1.ServiceExportReasonIPFamilyConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return !slices.Equal(w.IPFamilies, e.IPFamilies)
	}},
	{"labels", mcsv1beta1.ServiceExportReasonLabelsConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return !maps.Equal(w.ExportedLabels, e.ExportedLabels)
	}},
	{"annotations", mcsv1beta1.ServiceExportReasonAnnotationsConflict, func(w, e *mcv1alpha1.ExportedServiceSpec) bool {
		return !maps.Equal(w.ExportedAnnotations, e.ExportedAnnotations)
	}},
}

// Merge resolves the exports of one Service (one namespace and name) by
// the MCS API's conflict resolution: the oldest export decides. Exports
// are ordered by ExportedAt and, on a tie, by cluster name: the hub cannot
// tell which of two exports in the same second came first, and a name is
// the one order every run of every hub agrees on, whatever the order the
// exports were listed in. Each cluster exports a Service at most once (its
// ExportedService's name is the Service's).
//
// nil and empty slices and maps are equal; so are an empty session
// affinity and None, and an absent session affinity config and one
// without a ClientIP timeout, since the API server defaults them alike.
// A nil internal traffic policy or traffic distribution equals only nil:
// an older member that does not know the field is not the same as one
// that sets it.
func Merge(exports []mcv1alpha1.ExportedServiceSpec) Merged {
	if len(exports) == 0 {
		return Merged{}
	}
	sorted := make([]*mcv1alpha1.ExportedServiceSpec, len(exports))
	for i := range exports {
		sorted[i] = &exports[i]
	}
	slices.SortFunc(sorted, func(a, b *mcv1alpha1.ExportedServiceSpec) int {
		return cmp.Or(a.ExportedAt.Compare(b.ExportedAt.Time), strings.Compare(a.Cluster, b.Cluster))
	})
	w := sorted[0]
	m := Merged{
		Import: mcsv1beta1.ServiceImportSpec{
			Type:                  w.Type,
			Ports:                 unionPorts(sorted),
			SessionAffinity:       w.SessionAffinity,
			SessionAffinityConfig: w.SessionAffinityConfig.DeepCopy(),
			InternalTrafficPolicy: clonePtr(w.InternalTrafficPolicy),
			TrafficDistribution:   clonePtr(w.TrafficDistribution),
		},
		Labels:      maps.Clone(w.ExportedLabels),
		Annotations: maps.Clone(w.ExportedAnnotations),
		Winner:      w.Cluster,
		Verdicts:    make(map[string]Verdict, len(sorted)),
	}
	for _, e := range sorted {
		m.Clusters = append(m.Clusters, e.Cluster)
	}
	slices.Sort(m.Clusters)

	verdict := Verdict{Reason: mcsv1beta1.ServiceExportReasonNoConflicts, Message: "the exports of this Service agree"}
	var also []string
	for _, p := range conflictOrder {
		var against []string
		for _, e := range sorted[1:] {
			if p.differs(w, e) {
				against = append(against, e.Cluster)
			}
		}
		if len(against) == 0 {
			continue
		}
		if verdict.Conflict {
			also = append(also, p.name)
			continue
		}
		slices.Sort(against)
		verdict = Verdict{Conflict: true, Reason: p.reason, Message: fmt.Sprintf(
			"conflicting %s: the ServiceImport takes cluster %s's (the oldest export); clusters %s differ",
			p.name, w.Cluster, strings.Join(against, ", "))}
		if p.reason == mcsv1beta1.ServiceExportReasonPortConflict {
			verdict.Message = fmt.Sprintf("conflicting ports: the ServiceImport has every export's ports, cluster %s's (the oldest export) on a clash; clusters %s differ",
				w.Cluster, strings.Join(against, ", "))
		}
	}
	if len(also) > 0 {
		verdict.Message += "; also conflicting: " + strings.Join(also, ", ")
	}
	// Every export, the oldest included, carries the verdict: the
	// conflict is the Service's, and each exporter's owner should see it.
	for _, c := range m.Clusters {
		m.Verdicts[c] = verdict
	}
	return m
}

// portKey identifies a port across exports: its name, as Service ports
// and EndpointSlice ports are matched by name; an unnamed port (allowed
// when it is a Service's only one) by its number and protocol.
func portKey(p mcsv1beta1.ServicePort) string {
	if p.Name != "" {
		return "name:" + p.Name
	}
	return "port:" + strconv.Itoa(int(p.Port)) + "/" + string(p.Protocol)
}

// normalPort defaults the protocol to TCP, as the API server does, so
// that an export that spells it out agrees with one that does not.
func normalPort(p mcsv1beta1.ServicePort) mcsv1beta1.ServicePort {
	if p.Protocol == "" {
		p.Protocol = corev1.ProtocolTCP
	}
	p.AppProtocol = clonePtr(p.AppProtocol)
	return p
}

// portSet is an export's ports, normalized, first of each key, sorted.
func portSet(ports []mcsv1beta1.ServicePort) []mcsv1beta1.ServicePort {
	seen := map[string]bool{}
	var out []mcsv1beta1.ServicePort
	for _, p := range ports {
		p = normalPort(p)
		if k := portKey(p); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	sortPorts(out)
	return out
}

// unionPorts is every export's ports; on a key two exports define
// differently, the oldest's definition, as for every other property.
func unionPorts(sorted []*mcv1alpha1.ExportedServiceSpec) []mcsv1beta1.ServicePort {
	seen := map[string]bool{}
	var out []mcsv1beta1.ServicePort
	for _, e := range sorted {
		for _, p := range portSet(e.Ports) {
			if k := portKey(p); !seen[k] {
				seen[k] = true
				out = append(out, p)
			}
		}
	}
	sortPorts(out)
	return out
}

// sortPorts orders ports by name, number, protocol: unnamed ports first.
func sortPorts(ports []mcsv1beta1.ServicePort) {
	slices.SortFunc(ports, func(a, b mcsv1beta1.ServicePort) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)))
	})
}

func portEqual(a, b mcsv1beta1.ServicePort) bool {
	return a.Name == b.Name && a.Port == b.Port && a.Protocol == b.Protocol && ptrEqual(a.AppProtocol, b.AppProtocol)
}

func affinity(a corev1.ServiceAffinity) corev1.ServiceAffinity {
	if a == "" {
		return corev1.ServiceAffinityNone
	}
	return a
}

// clientIPTimeout is the one setting a session affinity config holds.
func clientIPTimeout(c *corev1.SessionAffinityConfig) *int32 {
	if c == nil || c.ClientIP == nil {
		return nil
	}
	return c.ClientIP.TimeoutSeconds
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
