// Package resourceselector says whether, and how specifically, a policy's
// resourceSelectors pick a resource template.
//
// Propagation policies and override policies select templates with the same
// ResourceSelector type, and users expect one selector to pick the same
// templates whichever kind of policy it sits in. Both the detector (which
// policy governs a template) and the override engine (in which order
// override policies apply) therefore rank matches here, by one definition.
package resourceselector

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Template is what matching reads of a resource template.
type Template struct {
	GroupKind schema.GroupKind
	// Namespace is empty for a cluster-scoped template.
	Namespace string
	Name      string
	Labels    map[string]string
}

// TemplateOf returns what matching reads of obj.
func TemplateOf(obj *unstructured.Unstructured) *Template {
	return &Template{
		GroupKind: obj.GroupVersionKind().GroupKind(),
		Namespace: obj.GetNamespace(),
		Name:      obj.GetName(),
		Labels:    obj.GetLabels(),
	}
}

// Strength is how specifically a selector picks a template. The constants
// are ordered: a stronger match compares greater.
type Strength int

const (
	// NoMatch: the selector does not pick the template.
	NoMatch Strength = iota
	// ByKind: the selector names only the kind (and maybe the namespace).
	ByKind
	// ByLabel: the selector's label selector matches.
	ByLabel
	// ByName: the selector names the template.
	ByName
)

// String returns the constant's name, for messages and test failures.
func (s Strength) String() string {
	switch s {
	case NoMatch:
		return "NoMatch"
	case ByKind:
		return "ByKind"
	case ByLabel:
		return "ByLabel"
	case ByName:
		return "ByName"
	}
	return "Strength(?)"
}

// SelectorStrength says how sel, a selector of a policy in policyNamespace
// ("" for a cluster-scoped policy), picks t.
//
// Selectors match by API group and kind, not version: a template is one
// object whatever version it is read in, and the detector watches each
// kind in its preferred version only. A namespaced policy selects only
// templates of its own namespace, whatever its selector says. An invalid
// apiVersion or label selector matches nothing.
func SelectorStrength(sel *policyv1alpha1.ResourceSelector, policyNamespace string, t *Template) Strength {
	gv, err := schema.ParseGroupVersion(sel.APIVersion)
	if err != nil || gv.Group != t.GroupKind.Group || sel.Kind != t.GroupKind.Kind {
		return NoMatch
	}
	if policyNamespace != "" {
		if t.Namespace != policyNamespace || (sel.Namespace != "" && sel.Namespace != policyNamespace) {
			return NoMatch
		}
	} else if sel.Namespace != "" && sel.Namespace != t.Namespace {
		return NoMatch
	}
	switch {
	case sel.Name != "":
		if sel.Name == t.Name {
			return ByName
		}
		return NoMatch
	case sel.LabelSelector != nil:
		s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
		if err != nil || !s.Matches(labels.Set(t.Labels)) {
			return NoMatch
		}
		return ByLabel
	}
	return ByKind
}

// Strongest is the strength of the strongest of sels for t: how
// specifically a policy with these selectors picks t. No selectors is
// NoMatch; what an empty list means is the caller's to decide.
func Strongest(sels []policyv1alpha1.ResourceSelector, policyNamespace string, t *Template) Strength {
	best := NoMatch
	for i := range sels {
		best = max(best, SelectorStrength(&sels[i], policyNamespace, t))
	}
	return best
}
