package overrides

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clustermatch"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// Policy names an override policy.
type Policy struct {
	// Kind is policyv1alpha1.KindOverridePolicy or KindClusterOverridePolicy.
	Kind string
	// Namespace is empty for a ClusterOverridePolicy.
	Namespace string
	Name      string
}

// String returns "OverridePolicy <namespace>/<name>" or
// "ClusterOverridePolicy <name>".
func (p Policy) String() string {
	if p.Namespace == "" {
		return p.Kind + " " + p.Name
	}
	return p.Kind + " " + p.Namespace + "/" + p.Name
}

// Applied is one rule of a policy that was applied.
type Applied struct {
	Policy
	// Rule is the index in spec.overrideRules; 0 for a policy in the
	// deprecated form (spec.targetCluster and spec.overriders).
	Rule int
}

// Error is an overrider, or a targetCluster, that could not apply.
type Error struct {
	Policy Policy
	Rule   int
	// Overrider names the overrider, e.g. "plaintext[1]" or
	// "imageOverrider[0]", or "targetCluster" when the rule's affinity is
	// invalid.
	Overrider string
	Err       error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s rule %d %s: %v", e.Policy, e.Rule, e.Overrider, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Apply changes obj, a copy the caller made of a resource template, into
// what goes to cluster, applying the matching clusterPolicies and policies
// in the order the package documentation gives. It returns the rules it
// applied, in order. On error obj is partly changed and must be discarded.
// kinds says where obj's kind keeps its pod spec.
func Apply(kinds Kinds, obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, clusterPolicies []policyv1alpha1.ClusterOverridePolicy, policies []policyv1alpha1.OverridePolicy) ([]Applied, error) {
	if kinds == nil || obj == nil || cluster == nil {
		return nil, errors.New("overrides: Apply needs the kinds, an object and a cluster")
	}
	t := resourceselector.TemplateOf(obj)
	var cands []candidate
	var batch []candidate
	for i := range clusterPolicies {
		p := &clusterPolicies[i]
		if p.DeletionTimestamp == nil {
			batch = appendIfSelected(batch, t, Policy{policyv1alpha1.KindClusterOverridePolicy, "", p.Name}, &p.Spec)
		}
	}
	cands = append(cands, sorted(batch)...)
	batch = nil
	for i := range policies {
		p := &policies[i]
		if p.DeletionTimestamp == nil && t.Namespace != "" && p.Namespace == t.Namespace {
			batch = appendIfSelected(batch, t, Policy{policyv1alpha1.KindOverridePolicy, p.Namespace, p.Name}, &p.Spec)
		}
	}
	cands = append(cands, sorted(batch)...)

	id := identityOf(obj)
	var applied []Applied
	for _, c := range cands {
		for ri, rule := range c.spec.Rules() {
			if empty(&rule.Overriders) {
				continue
			}
			ok, err := clustermatch.Matches(rule.TargetCluster, cluster)
			if err != nil {
				return applied, &Error{Policy: c.policy, Rule: ri, Overrider: "targetCluster", Err: err}
			}
			if !ok {
				continue
			}
			if name, err := applyRule(kinds, obj, &rule.Overriders, id); err != nil {
				return applied, &Error{Policy: c.policy, Rule: ri, Overrider: name, Err: err}
			}
			applied = append(applied, Applied{Policy: c.policy, Rule: ri})
		}
	}
	return applied, nil
}

// candidate is a policy that selects the object.
type candidate struct {
	policy Policy
	spec   *policyv1alpha1.OverrideSpec
	// rank: 0 for a policy without selectors, else the strength of its
	// strongest matching selector (resourceselector.ByKind and up).
	rank int
}

func appendIfSelected(cands []candidate, t *resourceselector.Template, p Policy, spec *policyv1alpha1.OverrideSpec) []candidate {
	rank := 0
	if len(spec.ResourceSelectors) > 0 {
		s := resourceselector.Strongest(spec.ResourceSelectors, p.Namespace, t)
		if s == resourceselector.NoMatch {
			return cands
		}
		rank = int(s)
	}
	return append(cands, candidate{policy: p, spec: spec, rank: rank})
}

// sorted orders policies of one kind from the least to the most specific,
// then by name.
func sorted(cands []candidate) []candidate {
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.policy.Name, b.policy.Name))
	})
	return cands
}

func empty(o *policyv1alpha1.Overriders) bool {
	return len(o.ImageOverrider) == 0 && len(o.CommandOverrider) == 0 && len(o.ArgsOverrider) == 0 &&
		len(o.LabelsOverrider) == 0 && len(o.AnnotationsOverrider) == 0 && len(o.FieldOverrider) == 0 &&
		len(o.Plaintext) == 0
}

// applyRule applies a rule's overriders in Karmada's order. On error it
// returns the name of the overrider that failed.
func applyRule(kinds Kinds, obj *unstructured.Unstructured, o *policyv1alpha1.Overriders, id identity) (string, error) {
	type step struct {
		name  string
		n     int
		apply func(i int) error
	}
	steps := []step{
		{"imageOverrider", len(o.ImageOverrider), func(i int) error { return applyImage(kinds, obj, &o.ImageOverrider[i]) }},
		{"commandOverrider", len(o.CommandOverrider), func(i int) error { return applyCommandArgs(kinds, obj, "command", &o.CommandOverrider[i]) }},
		{"argsOverrider", len(o.ArgsOverrider), func(i int) error { return applyCommandArgs(kinds, obj, "args", &o.ArgsOverrider[i]) }},
		{"labelsOverrider", len(o.LabelsOverrider), func(i int) error { return applyLabels(obj, &o.LabelsOverrider[i]) }},
		{"annotationsOverrider", len(o.AnnotationsOverrider), func(i int) error { return applyAnnotations(obj, &o.AnnotationsOverrider[i]) }},
		{"fieldOverrider", len(o.FieldOverrider), func(i int) error { return applyField(obj, &o.FieldOverrider[i]) }},
		{"plaintext", len(o.Plaintext), func(i int) error { return applyPlaintext(obj, &o.Plaintext[i]) }},
	}
	for _, s := range steps {
		for i := range s.n {
			err := s.apply(i)
			if err == nil {
				err = id.check(obj)
			}
			if err != nil {
				return fmt.Sprintf("%s[%d]", s.name, i), err
			}
		}
	}
	return "", nil
}

// identity is what no overrider may change: what the object is (apiVersion
// and kind) and which object it is. Shepherd finds, updates and owns the
// member object by these fields, and scopes a tenant's templates by them;
// see policyv1alpha1.IdentityPaths. It is checked after every overrider,
// so a change through any of them (an image predicate or a fieldOverrider
// pointed at one of these fields) is refused as well as a plaintext one.
type identity struct {
	apiVersion, kind, name, generateName, namespace, uid, resourceVersion string
	ownerReferences, finalizers                                           any
}

func identityOf(obj *unstructured.Unstructured) identity {
	refs, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "ownerReferences")
	finalizers, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "finalizers")
	return identity{
		apiVersion:      obj.GetAPIVersion(),
		kind:            obj.GetKind(),
		name:            obj.GetName(),
		generateName:    obj.GetGenerateName(),
		namespace:       obj.GetNamespace(),
		uid:             string(obj.GetUID()),
		resourceVersion: obj.GetResourceVersion(),
		ownerReferences: refs,
		finalizers:      finalizers,
	}
}

func (id identity) check(obj *unstructured.Unstructured) error {
	now := identityOf(obj)
	var field string
	switch {
	case now.apiVersion != id.apiVersion:
		field = "apiVersion"
	case now.kind != id.kind:
		field = "kind"
	case now.name != id.name:
		field = "metadata.name"
	case now.generateName != id.generateName:
		field = "metadata.generateName"
	case now.namespace != id.namespace:
		field = "metadata.namespace"
	case now.uid != id.uid:
		field = "metadata.uid"
	case now.resourceVersion != id.resourceVersion:
		field = "metadata.resourceVersion"
	case !reflect.DeepEqual(now.ownerReferences, id.ownerReferences):
		field = "metadata.ownerReferences"
	case !reflect.DeepEqual(now.finalizers, id.finalizers):
		field = "metadata.finalizers"
	default:
		return nil
	}
	return fmt.Errorf("changes %s, which Shepherd keeps: change another field", field)
}

// Selecting returns the policies among clusterPolicies and policies whose
// selectors pick obj (those Apply would consider), in their given order:
// what a rollout revision records so that re-rendering it later applies
// exactly the same rules.
func Selecting(obj *unstructured.Unstructured, clusterPolicies []policyv1alpha1.ClusterOverridePolicy, policies []policyv1alpha1.OverridePolicy) ([]policyv1alpha1.ClusterOverridePolicy, []policyv1alpha1.OverridePolicy) {
	t := resourceselector.TemplateOf(obj)
	var cps []policyv1alpha1.ClusterOverridePolicy
	for i := range clusterPolicies {
		p := &clusterPolicies[i]
		if p.DeletionTimestamp == nil && appendIfSelected(nil, t, Policy{policyv1alpha1.KindClusterOverridePolicy, "", p.Name}, &p.Spec) != nil {
			cps = append(cps, *p)
		}
	}
	var ops []policyv1alpha1.OverridePolicy
	for i := range policies {
		p := &policies[i]
		if p.DeletionTimestamp == nil && t.Namespace != "" && p.Namespace == t.Namespace &&
			appendIfSelected(nil, t, Policy{policyv1alpha1.KindOverridePolicy, p.Namespace, p.Name}, &p.Spec) != nil {
			ops = append(ops, *p)
		}
	}
	return cps, ops
}
