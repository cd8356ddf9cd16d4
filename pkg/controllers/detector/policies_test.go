package detector

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// sel selects Deployments: by name, by labels, or all of them.
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
