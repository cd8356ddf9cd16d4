package framework

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Snapshot is an immutable view of the fleet: its clusters sorted by name,
// plus the indexes that make a scheduling cycle cheap. It is built once per
// fleet state and shared by any number of concurrent cycles.
//
// The indexes are postings lists (sorted cluster indices) per label
// key/value and per provider/region/zone value, the distinct enabled APIs and
// the distinct taints. A cycle turns a label selector into a ClusterSet with
// a handful of map lookups and O(clusters/64) word operations, instead of
// matching labels cluster by cluster.
type Snapshot struct {
	clusters []ClusterInfo
	byName   map[string]int32
	apiIDs   map[string]APIID
	taints   []corev1.Taint
	labels   map[string]*postings
	fields   map[string]*postings

	// Precomputed sets, so the common filters are a few word operations
	// per cycle: the clusters serving each API, the clusters whose APIs are
	// unknown (never probed, none reported), the clusters with each taint,
	// and the clusters being deleted.
	apiSets     []ClusterSet
	unknownAPIs ClusterSet
	taintSets   []ClusterSet
	deleting    ClusterSet
}

// postings indexes one label key (or field): the clusters that have it, and
// the clusters per value.
type postings struct {
	all    []int32
	values map[string][]int32
}

type taintKey struct {
	key, value string
	effect     corev1.TaintEffect
}

// NewSnapshot indexes clusters. The input is copied and sorted by name;
// names must be non-empty and unique.
func NewSnapshot(clusters []ClusterInfo) (*Snapshot, error) {
	s := &Snapshot{
		clusters: make([]ClusterInfo, len(clusters)),
		byName:   make(map[string]int32, len(clusters)),
		apiIDs:   map[string]APIID{},
		labels:   map[string]*postings{},
		fields:   map[string]*postings{},
	}
	for i := range clusters {
		s.clusters[i] = clusters[i].clone()
	}
	slices.SortFunc(s.clusters, func(a, b ClusterInfo) int { return strings.Compare(a.Name, b.Name) })
	taintIDs := map[taintKey]TaintID{}
	for i := range s.clusters {
		ci := &s.clusters[i]
		if ci.Name == "" {
			return nil, fmt.Errorf("cluster %d has no name", i)
		}
		if _, dup := s.byName[ci.Name]; dup {
			return nil, fmt.Errorf("cluster %q is listed twice", ci.Name)
		}
		ci.index = i
		s.byName[ci.Name] = int32(i)
		s.indexAPIs(ci)
		for _, t := range ci.Taints {
			k := taintKey{t.Key, t.Value, t.Effect}
			id, ok := taintIDs[k]
			if !ok {
				id = TaintID(len(s.taints))
				taintIDs[k] = id
				s.taints = append(s.taints, t)
			}
			ci.taintIDs = append(ci.taintIDs, id)
		}
		// Map iteration order does not matter here: clusters are visited in
		// index order, so every postings list comes out sorted.
		for k, v := range ci.Labels {
			addPosting(s.labels, k, v, i)
		}
		for _, f := range []string{policyv1alpha1.ProviderField, policyv1alpha1.RegionField, policyv1alpha1.ZoneField} {
			if v := ci.Field(f); v != "" {
				addPosting(s.fields, f, v, i)
			}
		}
	}
	s.buildSets()
	return s, nil
}

func (s *Snapshot) buildSets() {
	n := wordsFor(len(s.clusters))
	newSet := func() ClusterSet { return make(ClusterSet, n) }
	s.apiSets = make([]ClusterSet, len(s.apiIDs))
	for i := range s.apiSets {
		s.apiSets[i] = newSet()
	}
	s.taintSets = make([]ClusterSet, len(s.taints))
	for i := range s.taintSets {
		s.taintSets[i] = newSet()
	}
	s.unknownAPIs, s.deleting = newSet(), newSet()
	for i := range s.clusters {
		ci := &s.clusters[i]
		for id := range s.apiSets {
			if ci.HasAPI(APIID(id)) {
				s.apiSets[id].Add(i)
			}
		}
		for _, id := range ci.taintIDs {
			s.taintSets[id].Add(i)
		}
		if !ci.Probed && len(ci.APIs) == 0 {
			s.unknownAPIs.Add(i)
		}
		if ci.Deleting {
			s.deleting.Add(i)
		}
	}
}

func (s *Snapshot) indexAPIs(ci *ClusterInfo) {
	for _, key := range ci.APIs {
		id, ok := s.apiIDs[key]
		if !ok {
			id = APIID(len(s.apiIDs))
			s.apiIDs[key] = id
		}
		for int(id)>>6 >= len(ci.apiBits) {
			ci.apiBits = append(ci.apiBits, 0)
		}
		ci.apiBits[id>>6] |= 1 << (uint(id) & 63)
	}
	slices.Sort(ci.APIs)
}

func addPosting(idx map[string]*postings, key, value string, i int) {
	p := idx[key]
	if p == nil {
		p = &postings{values: map[string][]int32{}}
		idx[key] = p
	}
	p.all = append(p.all, int32(i))
	p.values[value] = append(p.values[value], int32(i))
}

// SnapshotFromClusters builds a snapshot from Cluster objects.
func SnapshotFromClusters(clusters []clusterv1alpha1.Cluster) (*Snapshot, error) {
	infos := make([]ClusterInfo, len(clusters))
	for i := range clusters {
		infos[i] = ClusterInfoFromCluster(&clusters[i])
	}
	return NewSnapshot(infos)
}

// Len is the number of clusters.
func (s *Snapshot) Len() int { return len(s.clusters) }

// At returns the cluster at index i (0 <= i < Len(), in name order).
func (s *Snapshot) At(i int) *ClusterInfo { return &s.clusters[i] }

// Index returns the index of the named cluster.
func (s *Snapshot) Index(name string) (int, bool) {
	i, ok := s.byName[name]
	return int(i), ok
}

// APIID returns the ID of an API ("group/version/Kind"); false when no
// cluster of the fleet serves it.
func (s *Snapshot) APIID(key string) (APIID, bool) {
	id, ok := s.apiIDs[key]
	return id, ok
}

// APIClusters returns the clusters serving the API (read-only).
func (s *Snapshot) APIClusters(id APIID) ClusterSet { return s.apiSets[id] }

// UnknownAPIClusters returns the clusters whose APIs are unknown: never
// probed and none reported (read-only).
func (s *Snapshot) UnknownAPIClusters() ClusterSet { return s.unknownAPIs }

// TaintClusters returns the clusters carrying the taint (read-only).
func (s *Snapshot) TaintClusters(id TaintID) ClusterSet { return s.taintSets[id] }

// Taint returns the distinct taint with the ID.
func (s *Snapshot) Taint(id TaintID) *corev1.Taint { return &s.taints[id] }

// NumTaints is the number of distinct taints in the fleet.
func (s *Snapshot) NumTaints() int { return len(s.taints) }
