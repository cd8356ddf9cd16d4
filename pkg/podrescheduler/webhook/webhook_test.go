package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
	"github.com/shepherd-io/shepherd/pkg/webhookserver/webhooktest"
)

func request(t *testing.T, pod *corev1.Pod) admission.Request {
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "req", Operation: admissionv1.Create, Namespace: "ns",
		Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw},
	}}
}

func TestMutator(t *testing.T) {
	deploy := func(name string, ann map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("d-" + name), Annotations: ann}}
	}
	objs := []client.Object{
		deploy("tried", map[string]string{annotations.SchedulingRetries: "2", annotations.ReschedulingCount: "1", annotations.ScheduledNodes: "a"}),
		deploy("fresh", map[string]string{annotations.SchedulingRetries: "2"}),
		deploy("exhausted", map[string]string{annotations.SchedulingRetries: "1", annotations.ReschedulingCount: "2", annotations.ScheduledNodes: "a,b"}),
		deploy("plain", nil),
	}
	for _, d := range []string{"tried", "fresh", "exhausted", "plain"} {
		objs = append(objs, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: d + "-rs", UID: k8stypes.UID("r-" + d),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d, UID: k8stypes.UID("d-" + d), Controller: ptr.To(true)}}}})
	}
	m := &mutator{reader: fake.NewClientBuilder().WithObjects(objs...).Build()}
	podOf := func(d string, ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: d + "-", Annotations: ann,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: d + "-rs", UID: k8stypes.UID("r-" + d), Controller: ptr.To(true)}}}}
	}
	state := map[string]string{annotations.ExcludedNodes: "a", annotations.SchedulingRetries: "2", annotations.ReschedulingCount: "1"}

	resp := m.Handle(context.Background(), request(t, podOf("tried", nil)))
	if !resp.Allowed || len(resp.Patches) != 1 || resp.Patches[0].Path != "/metadata/annotations" ||
		!reflect.DeepEqual(resp.Patches[0].Value, state) {
		t.Errorf("pod without annotations: %+v", resp)
	}
	resp = m.Handle(context.Background(), request(t, podOf("tried", map[string]string{"x": "y"})))
	if !resp.Allowed || len(resp.Patches) != 3 || resp.Patches[0].Path != "/metadata/annotations/shepherd.io~1excluded-nodes" {
		t.Errorf("pod with annotations: %+v", resp.Patches)
	}
	for _, d := range []string{"fresh", "exhausted", "plain"} {
		if resp := m.Handle(context.Background(), request(t, podOf(d, nil))); !resp.Allowed || len(resp.Patches) != 0 {
			t.Errorf("%s: want allowed without patch, got %+v", d, resp)
		}
	}

	failing := &mutator{reader: fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("apiserver unreachable")
		},
	}).Build()}
	if resp := failing.Handle(context.Background(), request(t, podOf("tried", nil))); !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("an error must admit the pod unchanged, got %+v", resp)
	}
}

// TestManifestMatchesConfiguration keeps the deployable configuration and
// the in-process one the same apart from how the webhook is reached.
func TestManifestMatchesConfiguration(t *testing.T) {
	webhooktest.CheckManifest(t, filepath.Join("..", "..", "..", "config", "podrescheduler", "webhook.yaml"), Path,
		&admissionregistrationv1.MutatingWebhookConfiguration{},
		func(cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
			return Configuration(DefaultConfigurationName, cc)
		})
}
