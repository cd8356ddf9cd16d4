package simmember

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Node shape of a member when a spec does not say otherwise: a typical
// general-purpose VM and the kubelet's default pod limit.
const (
	DefaultNodes    = 4
	DefaultNodeCPU  = "8"
	DefaultNodeMem  = "32Gi"
	DefaultNodePods = 110

	// MaxNodes bounds MemberSpec.Nodes: every node gets an InternalIP in
	// 10.240.0.0/16.
	MaxNodes = 1<<16 - 2
)

// FleetSpec describes the member clusters `shepherd up` simulates next to
// the hub.
type FleetSpec struct {
	Members []MemberSpec `json:"members"`
}

// MemberSpec describes one simulated member cluster: its identity and
// topology (as the hub's Cluster object will report them) and the shape of
// its fake nodes.
type MemberSpec struct {
	// Name is the cluster name; it also names the nodes (NAME-node-I) and
	// the kubeconfig context, so it must be a DNS-1123 label.
	Name     string `json:"name"`
	Provider string `json:"provider,omitempty"`
	// Region and Zone are also set as the topology.kubernetes.io labels of
	// every node, so they must be valid label values.
	Region string `json:"region,omitempty"`
	Zone   string `json:"zone,omitempty"`
	// Labels are the cluster's labels on the hub (for placement label
	// selectors); they are not applied to the member's nodes.
	Labels map[string]string `json:"labels,omitempty"`
	// Pull registers the member as a Pull cluster (`shepherd register`):
	// the hub never dials it, and an agent beside it does the work.
	Pull bool `json:"pull,omitempty"`

	// Nodes is the number of fake nodes, each with NodeCPU, NodeMemory and
	// NodePods as capacity and allocatable.
	Nodes      int               `json:"nodes"`
	NodeCPU    resource.Quantity `json:"nodeCPU"`
	NodeMemory resource.Quantity `json:"nodeMemory"`
	NodePods   int               `json:"nodePods"`
}

// DefaultMemberSpec returns a spec named name with the default node shape
// and no topology.
func DefaultMemberSpec(name string) MemberSpec {
	return MemberSpec{
		Name:       name,
		Nodes:      DefaultNodes,
		NodeCPU:    resource.MustParse(DefaultNodeCPU),
		NodeMemory: resource.MustParse(DefaultNodeMem),
		NodePods:   DefaultNodePods,
	}
}

// UnmarshalJSON starts from DefaultMemberSpec so that fields omitted in a
// fleet file take their defaults, while an explicit zero still fails
// validation instead of silently becoming the default. Unknown fields are
// errors: a misspelt field would otherwise silently take its default.
func (m *MemberSpec) UnmarshalJSON(data []byte) error {
	type plain MemberSpec // no methods: avoids recursing into UnmarshalJSON
	p := plain(DefaultMemberSpec(""))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("member: %w", err)
	}
	*m = MemberSpec(p)
	return nil
}

// topology is one entry of the DefaultFleet rotation.
type topology struct {
	provider, region string
	zones            []string
}

// defaultTopologies alternate providers so that consecutive members differ
// in provider, region and zone, which makes spread constraints by any of
// them meaningful from two members on.
var defaultTopologies = []topology{
	{"aws", "us-east-1", []string{"us-east-1a", "us-east-1b", "us-east-1c"}},
	{"gcp", "europe-west1", []string{"europe-west1-b", "europe-west1-c", "europe-west1-d"}},
	{"azure", "southeastasia", []string{"southeastasia-1", "southeastasia-2", "southeastasia-3"}},
	{"aws", "us-west-2", []string{"us-west-2a", "us-west-2b", "us-west-2c"}},
	{"gcp", "asia-northeast1", []string{"asia-northeast1-a", "asia-northeast1-b", "asia-northeast1-c"}},
	{"azure", "westeurope", []string{"westeurope-1", "westeurope-2", "westeurope-3"}},
}

// DefaultFleet returns member1..memberN with the default node shape.
// Members 1-6 are in distinct regions of aws, gcp and azure in turn; later
// members reuse those regions in other zones, so zones stay distinct up to
// 18 members.
func DefaultFleet(n int) FleetSpec {
	var f FleetSpec
	for i := range n {
		t := defaultTopologies[i%len(defaultTopologies)]
		m := DefaultMemberSpec(fmt.Sprintf("member%d", i+1))
		m.Provider = t.provider
		m.Region = t.region
		m.Zone = t.zones[(i/len(defaultTopologies))%len(t.zones)]
		f.Members = append(f.Members, m)
	}
	return f
}

// LoadFleet reads a FleetSpec from a YAML or JSON file and validates it.
// Unknown fields are errors, since a misspelt field would otherwise
// silently take its default or be ignored.
func LoadFleet(path string) (FleetSpec, error) {
	var f FleetSpec
	data, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("reading fleet: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return f, fmt.Errorf("parsing fleet %s: %w", path, err)
	}
	if err := f.Validate(); err != nil {
		return f, fmt.Errorf("fleet %s: %w", path, err)
	}
	return f, nil
}

// Validate reports every problem of the fleet, each naming its field, e.g.
// "members[1].nodes: must be at least 1".
func (f FleetSpec) Validate() error {
	if len(f.Members) == 0 {
		return errors.New("members: must list at least one member")
	}
	var errs []error
	seen := make(map[string]int, len(f.Members))
	for i, m := range f.Members {
		path := fmt.Sprintf("members[%d]", i)
		errs = append(errs, m.validate(path)...)
		if j, dup := seen[m.Name]; dup && m.Name != "" {
			errs = append(errs, fmt.Errorf("%s.name: %q is already used by members[%d]", path, m.Name, j))
		}
		seen[m.Name] = i
	}
	return errors.Join(errs...)
}

// Validate reports every problem of the spec, each naming its field.
func (m MemberSpec) Validate() error {
	return errors.Join(m.validate("")...)
}

// validate checks m, prefixing field names with path ("members[1]").
func (m MemberSpec) validate(path string) []error {
	field := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	var errs []error
	add := func(name, msg string) { errs = append(errs, fmt.Errorf("%s: %s", field(name), msg)) }

	if m.Name == "" {
		add("name", "is required")
	} else if msgs := validation.IsDNS1123Label(m.Name); len(msgs) != 0 {
		add("name", fmt.Sprintf("%q is not a DNS-1123 label: %s", m.Name, strings.Join(msgs, "; ")))
	}
	for _, f := range [...]struct{ name, value string }{{"region", m.Region}, {"zone", m.Zone}} {
		if msgs := validation.IsValidLabelValue(f.value); len(msgs) != 0 {
			add(f.name, fmt.Sprintf("%q is not a valid label value: %s", f.value, strings.Join(msgs, "; ")))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		v := m.Labels[k]
		if msgs := validation.IsQualifiedName(k); len(msgs) != 0 {
			add("labels", fmt.Sprintf("key %q: %s", k, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) != 0 {
			add("labels", fmt.Sprintf("value %q of %q: %s", v, k, strings.Join(msgs, "; ")))
		}
	}
	if m.Nodes < 1 {
		add("nodes", "must be at least 1")
	} else if m.Nodes > MaxNodes {
		add("nodes", fmt.Sprintf("must be at most %d", MaxNodes))
	}
	if m.NodeCPU.Sign() <= 0 {
		add("nodeCPU", "must be positive")
	}
	if m.NodeMemory.Sign() <= 0 {
		add("nodeMemory", "must be positive")
	}
	if m.NodePods < 1 {
		add("nodePods", "must be at least 1")
	}
	return errs
}
