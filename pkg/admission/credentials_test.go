package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// kubeconfig is a kubeconfig of one cluster whose user is user (YAML).
func kubeconfig(user string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: "https://m:6443", certificate-authority-data: Q0E=}}]
users: [{name: m, user: %s}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`, user)
}

func TestCredentialsValidator(t *testing.T) {
	v := &credentialsValidator{decoder: admission.NewDecoder(scheme.Scheme)}
	good := kubeconfig("{token: t}")
	bad := kubeconfig("{tokenFile: /token}")
	for _, tc := range []struct {
		name  string
		data  map[string][]byte
		allow bool
	}{
		{"self-contained", map[string][]byte{"kubeconfig": good}, true},
		{"token file", map[string][]byte{"kubeconfig": bad}, false},
		{"not a kubeconfig at all", map[string][]byte{"kubeconfig": []byte("{{")}, false},
		{"no kubeconfig key", map[string][]byte{"token": []byte("t")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(&corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: clusterclient.DefaultSecretsNamespace}, Data: tc.data})
			if err != nil {
				t.Fatal(err)
			}
			resp := v.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}})
			if resp.Allowed != tc.allow {
				t.Fatalf("allowed=%v, want %v: %+v", resp.Allowed, tc.allow, resp.Result)
			}
			if !tc.allow && (resp.Result == nil || resp.Result.Code != 422) {
				t.Errorf("refusal %+v, want 422 Invalid", resp.Result)
			}
		})
	}
	if _, err := NewCredentialsHandler(logr.Discard()); err != nil {
		t.Fatal(err)
	}
}
