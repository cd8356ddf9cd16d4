package execution

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestScope: a Work writes only what its binding names. A ResourceBinding's
// Work stays in its namespace and off cluster-scoped objects, a
// ClusterResourceBinding's off namespaced ones, every Work
// stays with its binding's kind, and a Work whose annotations do not say
// what it may write is refused rather than trusted.
func TestScope(t *testing.T) {
	cm := workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "team-a", Name: "cfg"}
	crb := workv1alpha1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding", Name: "cfg"}
	ns := workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: "team-b"}
	cmB := cm
	cmB.Namespace = "team-b"
	cases := []struct {
		name        string
		annotations map[string]string
		id          workv1alpha1.ResourceIdentifier
		scopeErr    string // from reading the annotations
		err         string // from checking id
	}{
		{name: "no binding: an administrator's Work", id: crb},
		{name: "in its namespace and kind", annotations: rb("team-a", "ConfigMap"), id: cm},
		{name: "turned into a ClusterRoleBinding", annotations: rb("team-a", "ConfigMap"), id: crb,
			err: "is of kind ClusterRoleBinding.rbac.authorization.k8s.io, but ResourceBinding team-a/cfg-configmap places a ConfigMap"},
		{name: "turned into a Namespace", annotations: rb("team-a", "Namespace"), id: ns,
			err: "v1 Namespace team-b is cluster-scoped in the member, but ResourceBinding team-a/cfg-configmap may write only in namespace team-a"},
		{name: "another namespace", annotations: rb("team-a", "ConfigMap"), id: cmB,
			err: "v1 ConfigMap team-b/cfg is in namespace team-b, but ResourceBinding team-a/cfg-configmap may write only in namespace team-a"},
		{name: "written before Works carried the kind: the namespace still holds", annotations: map[string]string{
			workv1alpha1.AnnotationBinding: "ResourceBinding/team-a/cfg-configmap"}, id: cmB, err: "may write only in namespace team-a"},
		{name: "a cluster binding's Work of its kind", annotations: map[string]string{
			workv1alpha1.AnnotationBinding: "ClusterResourceBinding//team-b-namespace", workv1alpha1.AnnotationResourceKind: "Namespace"}, id: ns},
		{name: "a cluster binding's Work of another kind", annotations: map[string]string{
			workv1alpha1.AnnotationBinding: "ClusterResourceBinding//team-b-namespace", workv1alpha1.AnnotationResourceKind: "Namespace"}, id: crb,
			err: "ClusterResourceBinding team-b-namespace places a Namespace"},
		{name: "a cluster binding's Work of a namespaced object (a redirected binding: the hub's credentials Secret)", annotations: map[string]string{
			workv1alpha1.AnnotationBinding: "ClusterResourceBinding//member2-secret", workv1alpha1.AnnotationResourceKind: "Secret"},
			id:  workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "Secret", Namespace: "shepherd-system", Name: "member2"},
			err: "a ClusterResourceBinding's Work writes only cluster-scoped objects"},
		{name: "malformed binding", annotations: map[string]string{workv1alpha1.AnnotationBinding: "nonsense"}, id: cm,
			scopeErr: `annotation work.shepherd.io/binding="nonsense" does not name a binding`},
		{name: "ResourceBinding without a namespace", annotations: map[string]string{workv1alpha1.AnnotationBinding: "ResourceBinding//x"}, id: cm,
			scopeErr: "names a ResourceBinding without a namespace"},
		{name: "unknown binding kind", annotations: map[string]string{workv1alpha1.AnnotationBinding: "Other/a/x"}, id: cm,
			scopeErr: `unknown binding kind "Other"`},
		{name: "empty kind", annotations: map[string]string{workv1alpha1.AnnotationBinding: "ResourceBinding/a/x", workv1alpha1.AnnotationResourceKind: ""}, id: cm,
			scopeErr: "names no kind"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}
			s, err := scopeOf(w)
			if !matches(err, tt.scopeErr) {
				t.Fatalf("scopeOf: want error %q, got %v", tt.scopeErr, err)
			}
			if err != nil {
				return
			}
			if err := s.permits(tt.id); !matches(err, tt.err) {
				t.Fatalf("permits: want error %q, got %v", tt.err, err)
			}
		})
	}
}

func rb(ns, kind string) map[string]string {
	return map[string]string{
		workv1alpha1.AnnotationBinding:      "ResourceBinding/" + ns + "/cfg-configmap",
		workv1alpha1.AnnotationResourceKind: kind,
	}
}

func matches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}
