package execution

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWrittenByKarmada: only an object that carries every mark Karmada's
// execution controller writes counts as Karmada's; a label alone, or a
// Work namespace that is not an execution namespace, does not.
func TestWrittenByKarmada(t *testing.T) {
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        bool
	}{
		{name: "Karmada v1.10 and later: Work in annotations",
			labels:      map[string]string{"karmada.io/managed": "true"},
			annotations: map[string]string{"work.karmada.io/name": "web-6b7d", "work.karmada.io/namespace": "karmada-es-member1"}, want: true},
		{name: "earlier Karmada: Work in labels",
			labels: map[string]string{"karmada.io/managed": "true", "work.karmada.io/name": "web-6b7d", "work.karmada.io/namespace": "karmada-es-member1"}, want: true},
		{name: "no object of anyone's", want: false},
		{name: "the managed label alone",
			labels: map[string]string{"karmada.io/managed": "true"}, want: false},
		{name: "managed label false",
			labels:      map[string]string{"karmada.io/managed": "false"},
			annotations: map[string]string{"work.karmada.io/name": "web-6b7d", "work.karmada.io/namespace": "karmada-es-member1"}, want: false},
		{name: "Work namespace not an execution namespace",
			labels:      map[string]string{"karmada.io/managed": "true"},
			annotations: map[string]string{"work.karmada.io/name": "web-6b7d", "work.karmada.io/namespace": "default"}, want: false},
		{name: "execution namespace prefix without a cluster",
			labels:      map[string]string{"karmada.io/managed": "true"},
			annotations: map[string]string{"work.karmada.io/name": "web-6b7d", "work.karmada.io/namespace": "karmada-es-"}, want: false},
		{name: "no Work name",
			labels:      map[string]string{"karmada.io/managed": "true"},
			annotations: map[string]string{"work.karmada.io/namespace": "karmada-es-member1"}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Labels: tc.labels, Annotations: tc.annotations}
			if got := writtenByKarmada(obj); got != tc.want {
				t.Fatalf("writtenByKarmada = %v, want %v", got, tc.want)
			}
		})
	}
}
