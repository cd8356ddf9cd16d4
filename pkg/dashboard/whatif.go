package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scenario"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// PlanView is what the scheduler would do with a policy, or with a
// workload as it stands, on the live fleet.
type PlanView struct {
	Workloads []PlannedWorkload
	// Unmatched are templates the policy names that it does not select.
	Unmatched []string
	Fleet     FleetView
}

// PlannedWorkload is one workload's placement and its explanation.
type PlannedWorkload struct {
	Name      string
	Replicas  int32
	Scheduled bool
	Reason    string
	Decisions []Decision
}

// Bounds of a what-if, each named in the answer to one over it: a what-if
// answers while the browser waits, so what would take too long is refused
// up front, and the rest is bounded by Options.WhatIfTimeout.
const (
	// maxWhatIfBytes bounds a pasted policy.
	maxWhatIfBytes = 256 << 10
	// maxSelectors is the most resourceSelectors a policy may have: the
	// hub's own limit (MaxItems in the CRD), which refuses a longer list.
	maxSelectors = 100
	// maxPlanned bounds the templates a what-if places and explains.
	maxPlanned = 500
)

// whatIfTooLarge answers a policy over maxWhatIfBytes.
var whatIfTooLarge = fmt.Sprintf("the policy is over %d KiB, the most a what-if takes: paste one policy, without status or managedFields", maxWhatIfBytes>>10)

// ParsePolicy reads a pasted PropagationPolicy or ClusterPropagationPolicy.
// Errors name what is wrong and how to fix it.
func ParsePolicy(text string) (client.Object, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("policy: paste a PropagationPolicy or a ClusterPropagationPolicy")
	}
	if len(text) > maxWhatIfBytes {
		return nil, errors.New(whatIfTooLarge)
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(text), &tm); err != nil {
		return nil, fmt.Errorf("policy: not YAML: %v", err)
	}
	var obj client.Object
	switch tm.Kind {
	case "PropagationPolicy":
		obj = &policyv1alpha1.PropagationPolicy{}
	case "ClusterPropagationPolicy":
		obj = &policyv1alpha1.ClusterPropagationPolicy{}
	default:
		return nil, fmt.Errorf("policy: kind %q: give a PropagationPolicy or a ClusterPropagationPolicy", tm.Kind)
	}
	if tm.APIVersion != policyv1alpha1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("policy: apiVersion %q: use %s", tm.APIVersion, policyv1alpha1.SchemeGroupVersion)
	}
	if err := yaml.UnmarshalStrict([]byte(text), obj); err != nil {
		return nil, fmt.Errorf("policy: %v", err)
	}
	if obj.GetName() == "" {
		return nil, errors.New("policy: metadata.name is empty: name the policy")
	}
	if tm.Kind == "PropagationPolicy" && obj.GetNamespace() == "" {
		obj.SetNamespace("default")
	}
	if n := len(selectors(obj)); n > maxSelectors {
		return nil, fmt.Errorf("policy: spec.resourceSelectors has %d selectors, more than the %d a policy may have (the hub refuses it too): split it into policies of at most %d and plan each", n, maxSelectors, maxSelectors)
	}
	return obj, nil
}

// selectors of a policy.
func selectors(obj client.Object) []policyv1alpha1.ResourceSelector {
	switch p := obj.(type) {
	case *policyv1alpha1.PropagationPolicy:
		return p.Spec.ResourceSelectors
	case *policyv1alpha1.ClusterPropagationPolicy:
		return p.Spec.ResourceSelectors
	}
	return nil
}

// WhatIf places the templates policy selects on the fleet of s, as `shepherd
// plan` would: the templates are listed with c (the user's identity), one
// list per kind and namespace however many selectors name them, and every
// placement is computed against the fleet as it is (earlier placements do
// not use up room). It stops when ctx ends, and refuses to place more than
// maxPlanned templates. kinds reads the templates' replicas and requests,
// as the detector does.
func WhatIf(ctx context.Context, kinds interpreter.Interpreter, c client.Client, s *Snapshot, policy client.Object) (PlanView, error) {
	docs, err := clusterDocs(s)
	if err != nil {
		return PlanView{}, err
	}
	p, err := json.Marshal(policy)
	if err != nil {
		return PlanView{}, err
	}
	docs = append(docs, p)
	seen := map[string]bool{}
	listed := map[string]bool{}
	for i, sel := range selectors(policy) {
		ns := sel.Namespace
		if _, ok := policy.(*policyv1alpha1.PropagationPolicy); ok {
			ns = policy.GetNamespace()
		}
		gv, err := schema.ParseGroupVersion(sel.APIVersion)
		if err != nil {
			return PlanView{}, formError(fmt.Sprintf("spec.resourceSelectors[%d].apiVersion %q: %v", i, sel.APIVersion, err))
		}
		// Selectors naming templates one by one share their kind's list.
		key := sel.APIVersion + "/" + sel.Kind + "/" + ns
		if listed[key] {
			continue
		}
		listed[key] = true
		if err := ctx.Err(); err != nil {
			return PlanView{}, err
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gv.WithKind(sel.Kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			if meta.IsNoMatchError(err) {
				return PlanView{}, formError(fmt.Sprintf("spec.resourceSelectors[%d]: the hub serves no kind %s in %s", i, sel.Kind, sel.APIVersion))
			}
			return PlanView{}, fmt.Errorf("listing %s %s in %q: %w", sel.APIVersion, sel.Kind, ns, err)
		}
		for j := range list.Items {
			o := &list.Items[j]
			key := o.GetAPIVersion() + "/" + o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
			if seen[key] {
				continue
			}
			seen[key] = true
			unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
			unstructured.RemoveNestedField(o.Object, "status")
			b, err := o.MarshalJSON()
			if err != nil {
				return PlanView{}, err
			}
			docs = append(docs, b)
		}
	}
	return plan(ctx, kinds, s, docs)
}

// Explain places binding b again on the fleet of s and explains every
// cluster, as `shepherd plan --explain` would with the binding as it
// stands (its previous targets and eviction history).
func Explain(ctx context.Context, kinds interpreter.Interpreter, s *Snapshot, b Binding) (PlanView, error) {
	docs, err := clusterDocs(s)
	if err != nil {
		return PlanView{}, err
	}
	raw, err := withKind(b.Obj)
	if err != nil {
		return PlanView{}, err
	}
	return plan(ctx, kinds, s, append(docs, raw))
}

func clusterDocs(s *Snapshot) ([][]byte, error) {
	docs := make([][]byte, 0, len(s.Clusters)+8)
	for _, c := range s.Clusters {
		raw, err := withKind(c)
		if err != nil {
			return nil, err
		}
		docs = append(docs, raw)
	}
	return docs, nil
}

// withKind marshals a typed object with its apiVersion and kind, which
// objects from the cache leave empty, from the scheme.
func withKind(obj client.Object) ([]byte, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
	if err != nil {
		return nil, err
	}
	o := obj.DeepCopyObject().(client.Object)
	o.GetObjectKind().SetGroupVersionKind(gvk)
	o.SetManagedFields(nil)
	return json.Marshal(o)
}

func plan(ctx context.Context, kinds interpreter.Interpreter, s *Snapshot, docs [][]byte) (PlanView, error) {
	sc, err := scenario.Parse(bytes.NewReader(bytes.Join(docs, []byte("\n"))), time.Now(), kinds)
	if err != nil {
		return PlanView{}, err
	}
	if n := len(sc.Workloads); n > maxPlanned {
		return PlanView{}, formError(fmt.Sprintf("the policy selects %d templates, more than the %d a what-if places: narrow its resourceSelectors (by name, namespace or labelSelector) or split it, and plan each part", n, maxPlanned))
	}
	v := PlanView{Unmatched: sc.Unmatched}
	clusters := make(map[string]*clusterv1alpha1.Cluster, len(s.Clusters))
	for _, c := range s.Clusters {
		clusters[c.Name] = c
	}
	sched := scheduler.NewDefault()
	placed := map[string]int32{}
	for _, w := range sc.Workloads {
		if err := ctx.Err(); err != nil {
			return PlanView{}, err
		}
		pw := PlannedWorkload{Name: w.Kind + " " + w.Namespace + "/" + w.Name, Replicas: w.Replicas}
		if w.Namespace == "" {
			pw.Name = w.Kind + " " + w.Name
		}
		res, err := sched.Schedule(ctx, sc.Snapshot, w)
		var ue *scheduler.UnschedulableError
		switch {
		case errors.As(err, &ue):
			pw.Reason = ue.Error()
		case err != nil:
			return PlanView{}, err
		default:
			pw.Scheduled = true
		}
		for i, e := range res.Explanations() {
			pw.Decisions = append(pw.Decisions, Decision{Cluster: e.Cluster, Selected: e.Selected, Replicas: e.Replicas,
				Scores: e.Scores, Total: e.Total, FilteredBy: e.FilteredBy, Reason: e.Reason,
				NodeRoom: NodeRoomOf(sc.Snapshot.At(i), clusters[e.Cluster], w, e.Reason)})
			if e.Selected {
				placed[e.Cluster] += e.Replicas
			}
		}
		res.Release()
		sortDecisions(pw.Decisions)
		v.Workloads = append(v.Workloads, pw)
	}
	v.Fleet = BuildFleet(s, nil)
	for _, c := range v.Fleet.Clusters {
		if n, ok := placed[c.Name]; ok {
			c.Highlight, c.Placed = true, n
		}
	}
	return v, nil
}

// sortDecisions puts selected clusters first, then the feasible by total
// score, then the filtered; ties by name.
func sortDecisions(d []Decision) {
	rank := func(x Decision) int {
		switch {
		case x.Selected:
			return 0
		case x.FilteredBy == "":
			return 1
		}
		return 2
	}
	sort.SliceStable(d, func(i, j int) bool {
		a, b := d[i], d[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.Cluster < b.Cluster
	})
}
