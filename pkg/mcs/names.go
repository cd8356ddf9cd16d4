package mcs

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// LabelServiceNamespace and LabelServiceName on an import Work (one per
	// member and exported Service) name the Service it imports: they find
	// a Service's Works in every member, and tell them from the Works
	// bindings own.
	LabelServiceNamespace = "multicluster.shepherd.io/service-namespace"
	LabelServiceName      = "multicluster.shepherd.io/service-name"
	// AnnotationClusters on a rendered ServiceImport lists the exporting
	// clusters, sorted and comma-separated. Status is not part of a
	// manifest, so the member copies it into status.clusters itself.
	AnnotationClusters = "multicluster.shepherd.io/clusters"
	// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
	// imported EndpointSlices: the member's EndpointSlice controller leaves
	// slices managed by others alone, and so must the mirroring one.
	ManagedBy = "mcs-controller.shepherd.io"
	// MaxManifests is how many objects one Work may carry; the manifests of
	// one Service must fit in one Work so that they are applied together.
	MaxManifests = 64
	// MaxEndpointsPerSlice is the EndpointSlice controller's default
	// maxEndpointsPerSlice: well under the API's limit of 1000, and small
	// enough that an endpoint's change does not rewrite a huge object.
	MaxEndpointsPerSlice = 100
)

// DerivedServiceName is the name of the Service that gives a ClusterSetIP
// ServiceImport its IP in a member. It must not be the Service's own name:
// the member may run the exported Service itself. A hash of the name is a
// valid DNS-1035 label (it starts with a letter and is 14 long) whatever
// the name is, and is the same in every member and on every run.
func DerivedServiceName(name string) string {
	return "mcs-" + shortHash(name, 10)
}

// sliceName names the n-th imported EndpointSlice of cluster for the
// Service name. A Service name is a DNS label and so has no dot, and n has
// none, so name.cluster.n tells every (name, cluster, n) apart even when a
// cluster's name has dots or dashes; dashes would not (service "a-b" of
// cluster "c" and service "a" of cluster "b-c"). The EndpointSlice
// controller's own names have no dot either. A pair that does not make a
// valid name gets a hash of it, which has two dot-separated parts and so
// cannot meet a name of three.
func sliceName(name, cluster string, n int) string {
	s := name + "." + cluster + "." + strconv.Itoa(n)
	if len(validation.IsDNS1123Subdomain(s)) == 0 {
		return s
	}
	return "mcs-" + shortHash(name+"\x00"+cluster, 16) + "." + strconv.Itoa(n)
}

// shortHash is the first n hex digits of s's SHA-256.
func shortHash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}
