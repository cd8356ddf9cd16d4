// Package scenario loads fleet scenarios: a fleet of clusters and the
// workloads to place on it, for `shepherd plan`, `shepherd bench`, the
// dashboard's what-if and tests.
//
// Two formats are read, and may be mixed in one multi-document YAML file:
//
//   - the fleet scenario format of docs/fleet-scenarios.md, as a JSON
//     object ({"name", "clusters", "workloads"}) or as a YAML document of
//     kind Scenario with the same fields;
//   - Shepherd's own objects: Cluster (spec, labels, status.resourceSummary,
//     status.apiEnablements, conditions), PropagationPolicy and
//     ClusterPropagationPolicy, the resource templates they select, and
//     ResourceBinding / ClusterResourceBinding, scheduled as they stand
//     (previous targets, eviction history, reschedule trigger).
//
// A template becomes the workload the detector's binding would describe,
// by the detector's own rules rather than a copy of them, so that a plan
// foresees what the hub will do: the policy that places it is
// policymatch.Match's choice (a template the hub never propagates, or no
// policy selects, is listed in Unmatched), and its replicas and what one
// replica requests are the interpreter's (Job completions capping the
// parallelism, the pod overhead, what customizations teach).
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Scenario is a loaded fleet and its workloads.
type Scenario struct {
	Name      string
	Snapshot  *framework.Snapshot
	Workloads []*framework.Workload
	// Unmatched are the templates ("Kind namespace/name") no policy selects.
	Unmatched []string

	// clusters the Snapshot was built from, for Room.
	clusters []framework.ClusterInfo
	// rollouts are the workloads' rollout strategies (Rollout).
	rollouts map[*framework.Workload]*policyv1alpha1.RolloutStrategy
}

// Load reads a scenario file; now is the clock of every workload, and
// kinds reads the templates' replicas (the process's interpreter; an
// offline tool, with no hub to learn customizations from, the built-in
// one).
func Load(path string, now time.Time, kinds interpreter.Interpreter) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Parse(f, now, kinds)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse reads a scenario from r, as Load does.
func Parse(r io.Reader, now time.Time, kinds interpreter.Interpreter) (*Scenario, error) {
	b := &builder{now: now, kinds: kinds}
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 64<<10)
	for n := 1; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		if err := b.add(raw); err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
	}
	return b.build()
}

type typeMeta struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Clusters   json.RawMessage `json:"clusters"`
}

// add dispatches one document on its kind.
func (b *builder) add(raw []byte) error {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return err
	}
	switch {
	case tm.Kind == "Scenario" || (tm.Kind == "" && tm.Clusters != nil):
		return b.addFleet(raw)
	case tm.Kind == "":
		return errors.New("not a scenario (no clusters) and not an object (no kind)")
	}
	return b.addObject(tm.APIVersion, tm.Kind, raw)
}

func (b *builder) addFleet(raw []byte) error {
	var f Fleet
	if err := json.Unmarshal(raw, &f); err != nil {
		return err
	}
	if b.name == "" {
		b.name = f.Name
	}
	for i := range f.Clusters {
		ci, err := f.Clusters[i].clusterInfo()
		if err != nil {
			return fmt.Errorf("clusters[%d] (%s): %w", i, f.Clusters[i].Name, err)
		}
		b.clusters = append(b.clusters, ci)
	}
	for i := range f.Workloads {
		fw := &f.Workloads[i]
		w, err := fw.workload()
		if err != nil {
			return fmt.Errorf("workloads[%d] (%s/%s): %w", i, fw.Namespace, fw.Name, err)
		}
		w.Now = b.now
		b.workloads = append(b.workloads, w)
	}
	return nil
}

func (b *builder) build() (*Scenario, error) {
	if err := b.placeTemplates(); err != nil {
		return nil, err
	}
	if len(b.clusters) == 0 {
		return nil, errors.New("no clusters: give a scenario with clusters or Cluster objects")
	}
	snap, err := framework.NewSnapshot(b.clusters)
	if err != nil {
		return nil, err
	}
	return &Scenario{Name: b.name, Snapshot: snap, Workloads: b.workloads, Unmatched: b.unmatched, clusters: b.clusters, rollouts: b.rollouts}, nil
}

// Rollout is the rollout strategy a workload's policy (or binding) gives
// it; nil for the default, All.
func (s *Scenario) Rollout(w *framework.Workload) *policyv1alpha1.RolloutStrategy {
	return s.rollouts[w]
}

// ClusterLabels are the labels of the scenario's cluster name (nil when
// there is no such cluster).
func (s *Scenario) ClusterLabels(name string) map[string]string {
	for i := range s.clusters {
		if s.clusters[i].Name == name {
			return s.clusters[i].Labels
		}
	}
	return nil
}
