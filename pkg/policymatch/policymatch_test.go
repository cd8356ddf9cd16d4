package policymatch

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

var deployment = schema.GroupKind{Group: "apps", Kind: "Deployment"}

func sel(name string, labels map[string]string) policyv1alpha1.ResourceSelector {
	s := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
	if labels != nil {
		s.LabelSelector = &metav1.LabelSelector{MatchLabels: labels}
	}
	return s
}

func pp(ns, name string, prio int32, sels ...policyv1alpha1.ResourceSelector) policyv1alpha1.PolicyObject {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: sels, Priority: ptr.To(prio)},
	}
}

func cpp(name string, prio int32, sels ...policyv1alpha1.ResourceSelector) policyv1alpha1.PolicyObject {
	return &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: sels, Priority: ptr.To(prio)},
	}
}

func TestMatch(t *testing.T) {
	web := &Template{GroupKind: deployment, Namespace: "ns", Name: "web", Labels: map[string]string{"app": "web"}}
	deleting := pp("ns", "a-deleting", 100, sel("web", nil))
	deleting.SetDeletionTimestamp(&metav1.Time{})
	otherNS := sel("web", nil)
	otherNS.Namespace = "other"
	cppOtherNS := sel("", nil)
	cppOtherNS.Namespace = "other"
	wrongVersion := sel("web", nil)
	wrongVersion.APIVersion = "apps/v1beta1"
	wrongGroup := sel("web", nil)
	wrongGroup.APIVersion = "extensions/v1beta1"

	tests := []struct {
		name     string
		t        *Template
		pps      []policyv1alpha1.PolicyObject
		cpps     []policyv1alpha1.PolicyObject
		want     string // policy name; "" for no match
		wantKind string
	}{
		{name: "no policy", t: web},
		{name: "kind-only selector", t: web, pps: []policyv1alpha1.PolicyObject{pp("ns", "all", 0, sel("", nil))}, want: "all"},
		{name: "name beats label beats kind whatever the priority", t: web, pps: []policyv1alpha1.PolicyObject{
			pp("ns", "by-kind", 100, sel("", nil)),
			pp("ns", "by-label", 50, sel("", map[string]string{"app": "web"})),
			pp("ns", "by-name", 0, sel("web", nil)),
		}, want: "by-name"},
		{name: "label beats kind", t: web, pps: []policyv1alpha1.PolicyObject{
			pp("ns", "by-kind", 100, sel("", nil)),
			pp("ns", "by-label", 0, sel("", map[string]string{"app": "web"})),
		}, want: "by-label"},
		{name: "then priority", t: web, pps: []policyv1alpha1.PolicyObject{
			pp("ns", "a", 1, sel("web", nil)), pp("ns", "b", 2, sel("web", nil)),
		}, want: "b"},
		{name: "then name", t: web, pps: []policyv1alpha1.PolicyObject{
			pp("ns", "zz", 1, sel("web", nil)), pp("ns", "aa", 1, sel("web", nil)),
		}, want: "aa"},
		{name: "strongest selector of a policy counts", t: web, pps: []policyv1alpha1.PolicyObject{
			pp("ns", "a", 0, sel("", nil)), pp("ns", "b", 0, sel("other", nil), sel("web", nil)),
		}, want: "b"},
		{name: "label mismatch", t: web, pps: []policyv1alpha1.PolicyObject{pp("ns", "x", 0, sel("", map[string]string{"app": "db"}))}},
		{name: "name mismatch", t: web, pps: []policyv1alpha1.PolicyObject{pp("ns", "x", 0, sel("db", nil))}},
		{name: "version does not matter", t: web, pps: []policyv1alpha1.PolicyObject{pp("ns", "x", 0, wrongVersion)}, want: "x"},
		{name: "group matters", t: web, pps: []policyv1alpha1.PolicyObject{pp("ns", "x", 0, wrongGroup)}},
		{name: "PropagationPolicy of another namespace", t: web, pps: []policyv1alpha1.PolicyObject{pp("other", "x", 0, sel("web", nil))}},
		{name: "PropagationPolicy naming another namespace", t: web, pps: []policyv1alpha1.PolicyObject{pp("ns", "x", 0, otherNS)}},
		{name: "PropagationPolicy beats a stronger ClusterPropagationPolicy", t: web,
			pps:  []policyv1alpha1.PolicyObject{pp("ns", "weak", 0, sel("", nil))},
			cpps: []policyv1alpha1.PolicyObject{cpp("strong", 1000, sel("web", nil))},
			want: "weak", wantKind: policyv1alpha1.KindPropagationPolicy},
		{name: "ClusterPropagationPolicy when no PropagationPolicy matches", t: web,
			pps:  []policyv1alpha1.PolicyObject{pp("ns", "db", 0, sel("db", nil))},
			cpps: []policyv1alpha1.PolicyObject{cpp("all", 0, sel("", nil))},
			want: "all", wantKind: policyv1alpha1.KindClusterPropagationPolicy},
		{name: "ClusterPropagationPolicy selector namespace", t: web, cpps: []policyv1alpha1.PolicyObject{cpp("x", 0, cppOtherNS)}},
		{name: "ClusterPropagationPolicy namespace selector on a cluster-scoped template",
			t:    &Template{GroupKind: deployment, Name: "web"},
			cpps: []policyv1alpha1.PolicyObject{cpp("x", 0, cppOtherNS), cpp("y", 0, sel("web", nil))}, want: "y"},
		{name: "deleting policies match nothing", t: web, pps: []policyv1alpha1.PolicyObject{deleting, pp("ns", "z", 0, sel("", nil))}, want: "z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, order := range [][]policyv1alpha1.PolicyObject{tt.pps, reversed(tt.pps)} {
				got := Match(tt.t, order, tt.cpps)
				switch {
				case tt.want == "" && got != nil:
					t.Fatalf("matched %s, want none", got.GetName())
				case tt.want == "":
				case got == nil:
					t.Fatalf("matched none, want %s", tt.want)
				case got.GetName() != tt.want:
					t.Fatalf("matched %s, want %s", got.GetName(), tt.want)
				case tt.wantKind != "" && kindOf(got) != tt.wantKind:
					t.Fatalf("matched a %s, want a %s", kindOf(got), tt.wantKind)
				}
			}
		})
	}
}

// kindOf names p's kind, as spec.policyRef.kind does.
func kindOf(p policyv1alpha1.PolicyObject) string {
	if _, ok := p.(*policyv1alpha1.ClusterPropagationPolicy); ok {
		return policyv1alpha1.KindClusterPropagationPolicy
	}
	return policyv1alpha1.KindPropagationPolicy
}

func reversed(ps []policyv1alpha1.PolicyObject) []policyv1alpha1.PolicyObject {
	out := slices.Clone(ps)
	slices.Reverse(out)
	return out
}

// TestTied: only policies of the winner's kind with the same selector
// strength and priority tie; the result is sorted and excludes the winner.
func TestTied(t *testing.T) {
	web := &Template{GroupKind: deployment, Namespace: "ns", Name: "web", Labels: map[string]string{"app": "web"}}
	deleting := pp("ns", "d-deleting", 0, sel("web", nil))
	deleting.SetDeletionTimestamp(&metav1.Time{})
	tests := []struct {
		name string
		pps  []policyv1alpha1.PolicyObject
		cpps []policyv1alpha1.PolicyObject
		want []string
	}{
		{name: "a single policy ties with none", pps: []policyv1alpha1.PolicyObject{pp("ns", "a", 0, sel("web", nil))}},
		{name: "same strength and priority tie", pps: []policyv1alpha1.PolicyObject{
			pp("ns", "c", 0, sel("web", nil)), pp("ns", "a", 0, sel("web", nil)), pp("ns", "b", 0, sel("web", nil))}, want: []string{"b", "c"}},
		{name: "a higher priority wins alone", pps: []policyv1alpha1.PolicyObject{pp("ns", "a", 1, sel("web", nil)), pp("ns", "b", 0, sel("web", nil))}},
		{name: "a weaker selector does not tie", pps: []policyv1alpha1.PolicyObject{pp("ns", "a", 0, sel("web", nil)), pp("ns", "b", 0, sel("", map[string]string{"app": "web"}))}},
		{name: "cluster policies do not tie with a namespaced winner", pps: []policyv1alpha1.PolicyObject{pp("ns", "a", 0, sel("web", nil))},
			cpps: []policyv1alpha1.PolicyObject{cpp("b", 0, sel("web", nil))}},
		{name: "cluster policies tie among themselves", cpps: []policyv1alpha1.PolicyObject{cpp("b", 0, sel("", nil)), cpp("a", 0, sel("", nil))}, want: []string{"b"}},
		{name: "a policy being deleted does not tie", pps: []policyv1alpha1.PolicyObject{pp("ns", "a", 0, sel("web", nil)), deleting}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			winner := Match(web, tt.pps, tt.cpps)
			var got []string
			for _, p := range Tied(web, winner, tt.pps, tt.cpps) {
				got = append(got, p.GetName())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tied %v, want %v (winner %s)", got, tt.want, winner.GetName())
			}
		})
	}
}

// always sets preemption: Always on p.
func always(p policyv1alpha1.PolicyObject) policyv1alpha1.PolicyObject {
	p.GetPropagationSpec().Preemption = policyv1alpha1.PreemptAlways
	return p
}

func TestGovern(t *testing.T) {
	web := &Template{GroupKind: deployment, Namespace: "ns", Name: "web"}
	ppRef := func(name string) *workv1alpha1.PolicyReference {
		return &workv1alpha1.PolicyReference{Kind: policyv1alpha1.KindPropagationPolicy, Namespace: "ns", Name: name}
	}
	cppRef := func(name string) *workv1alpha1.PolicyReference {
		return &workv1alpha1.PolicyReference{Kind: policyv1alpha1.KindClusterPropagationPolicy, Name: name}
	}
	deleting := pp("ns", "old", 0, sel("web", nil))
	deleting.SetDeletionTimestamp(&metav1.Time{})
	tests := []struct {
		name          string
		claimant      *workv1alpha1.PolicyReference
		pps, cpps     []policyv1alpha1.PolicyObject
		want, preempt string // policy names; "" for none
	}{
		{name: "unclaimed: the best policy", pps: []policyv1alpha1.PolicyObject{pp("ns", "old", 0, sel("", nil)), pp("ns", "new", 5, sel("web", nil))},
			want: "new"},
		{name: "a better policy without preemption does not take it", claimant: ppRef("old"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "old", 0, sel("", nil)), pp("ns", "new", 5, sel("web", nil))}, want: "old"},
		{name: "Always with a higher priority takes it", claimant: ppRef("old"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "old", 0, sel("web", nil)), always(pp("ns", "new", 5, sel("", nil)))}, want: "new", preempt: "old"},
		{name: "Always with an equal priority does not", claimant: ppRef("old"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "old", 5, sel("", nil)), always(pp("ns", "new", 5, sel("web", nil)))}, want: "old"},
		{name: "Always with a lower priority does not", claimant: ppRef("old"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "old", 5, sel("web", nil)), always(pp("ns", "new", 1, sel("web", nil)))}, want: "old"},
		{name: "a PropagationPolicy with Always takes it from any ClusterPropagationPolicy", claimant: cppRef("old"),
			pps: []policyv1alpha1.PolicyObject{always(pp("ns", "new", -10, sel("", nil)))}, cpps: []policyv1alpha1.PolicyObject{cpp("old", 100, sel("web", nil))},
			want: "new", preempt: "old"},
		{name: "a ClusterPropagationPolicy with namespacedPreemption: Deny keeps it from a PropagationPolicy with Always", claimant: cppRef("old"),
			pps: []policyv1alpha1.PolicyObject{always(pp("ns", "new", 100, sel("web", nil)))}, cpps: []policyv1alpha1.PolicyObject{denyNamespaced(cpp("old", 0, sel("web", nil)))},
			want: "old"},
		{name: "namespacedPreemption: Deny still yields to a ClusterPropagationPolicy that outranks it", claimant: cppRef("old"),
			cpps: []policyv1alpha1.PolicyObject{denyNamespaced(cpp("old", 0, sel("web", nil))), always(cpp("new", 1, sel("", nil)))}, want: "new", preempt: "old"},
		{name: "a PropagationPolicy without preemption does not", claimant: cppRef("old"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "new", 100, sel("web", nil))}, cpps: []policyv1alpha1.PolicyObject{cpp("old", 0, sel("", nil))},
			want: "old"},
		{name: "a ClusterPropagationPolicy never takes it from a PropagationPolicy", claimant: ppRef("old"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "old", 0, sel("", nil))}, cpps: []policyv1alpha1.PolicyObject{always(cpp("new", 100, sel("web", nil)))},
			want: "old"},
		{name: "a ClusterPropagationPolicy with Always and a higher priority takes it from another", claimant: cppRef("old"),
			cpps: []policyv1alpha1.PolicyObject{cpp("old", 0, sel("web", nil)), always(cpp("new", 1, sel("", nil)))}, want: "new", preempt: "old"},
		{name: "of several that may, the best", claimant: ppRef("old"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "old", 0, sel("web", nil)), always(pp("ns", "b", 3, sel("", nil))),
				always(pp("ns", "a", 2, sel("web", nil))), pp("ns", "c", 9, sel("web", nil))}, want: "a", preempt: "old"},
		{name: "a claimant that no longer matches lets the best take it", claimant: ppRef("old"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "old", 0, sel("api", nil)), pp("ns", "new", 0, sel("", nil))}, want: "new"},
		{name: "a claimant being deleted lets the best take it", claimant: ppRef("old"),
			pps: []policyv1alpha1.PolicyObject{deleting, pp("ns", "new", 0, sel("", nil))}, want: "new"},
		{name: "a claimant that is gone lets the best take it", claimant: ppRef("gone"),
			pps: []policyv1alpha1.PolicyObject{pp("ns", "new", 0, sel("", nil))}, want: "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := func(p policyv1alpha1.PolicyObject) string {
				if p == nil {
					return ""
				}
				return p.GetName()
			}
			for _, order := range [][2][]policyv1alpha1.PolicyObject{{tt.pps, tt.cpps}, {reversed(tt.pps), reversed(tt.cpps)}} {
				got, preempted := Govern(web, tt.claimant, order[0], order[1])
				if name(got) != tt.want || name(preempted) != tt.preempt {
					t.Errorf("got %q (preempted %q), want %q (preempted %q)", name(got), name(preempted), tt.want, tt.preempt)
				}
			}
		})
	}
}

// denyNamespaced sets spec.namespacedPreemption: Deny on a cluster policy.
func denyNamespaced(p policyv1alpha1.PolicyObject) policyv1alpha1.PolicyObject {
	p.GetPropagationSpec().NamespacedPreemption = policyv1alpha1.NamespacedPreemptionDeny
	return p
}
