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
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/workload/workloadtest"
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

func deploy(uid k8stypes.UID, ann map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: uid, Annotations: ann}}
}

func replicaSet(uid k8stypes.UID) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-rs", UID: uid,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d1", Controller: ptr.To(true)}}}}
}

// podOf is a new pod of replicaSet("r1").
func podOf(ann map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Annotations: ann,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-rs", UID: "r1", Controller: ptr.To(true)}}}}
}

// TestMutatorReads checks what the webhook reads, from its cache and from
// the API server, to decide on a pod, and what it decides.
func TestMutatorReads(t *testing.T) {
	tried := map[string]string{annotations.SchedulingRetries: "2", annotations.ReschedulingCount: "1", annotations.ScheduledNodes: "a"}
	triedTwice := map[string]string{annotations.SchedulingRetries: "2", annotations.ReschedulingCount: "2", annotations.ScheduledNodes: "a,b"}
	fresh := map[string]string{annotations.SchedulingRetries: "2"}
	exhausted := map[string]string{annotations.SchedulingRetries: "1", annotations.ReschedulingCount: "2", annotations.ScheduledNodes: "a,b"}
	tests := []struct {
		name          string
		cache, direct []client.Object
		noCache       bool // the mutator has no cache
		wantAPIGets   int
		wantExcluded  string // "" for no patch
	}{
		{name: "not opted in, from the cache", cache: []client.Object{replicaSet("r1"), deploy("d1", nil)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", nil)}},
		{name: "opted in: retry state read fresh", cache: []client.Object{replicaSet("r1"), deploy("d1", tried)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", triedTwice)}, wantAPIGets: 1, wantExcluded: "a,b"},
		{name: "opted in a moment ago, cache lags", cache: []client.Object{replicaSet("r1"), deploy("d1", nil)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", tried)}},
		{name: "opted out a moment ago, cache lags", cache: []client.Object{replicaSet("r1"), deploy("d1", tried)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", nil)}, wantAPIGets: 1},
		{name: "opted in, nothing tried yet", cache: []client.Object{replicaSet("r1"), deploy("d1", fresh)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", fresh)}, wantAPIGets: 1},
		{name: "opted in, retries exhausted", cache: []client.Object{replicaSet("r1"), deploy("d1", exhausted)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", exhausted)}, wantAPIGets: 1},
		{name: "replicaset not cached yet", cache: []client.Object{deploy("d1", nil)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", nil)}, wantAPIGets: 1},
		{name: "replicaset not cached yet, opted in", cache: []client.Object{deploy("d1", tried)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", tried)}, wantAPIGets: 2, wantExcluded: "a"},
		{name: "replicaset re-created, cache has the old UID", cache: []client.Object{replicaSet("r0"), deploy("d1", nil)},
			direct: []client.Object{replicaSet("r1"), deploy("d1", nil)}, wantAPIGets: 1},
		{name: "deployment re-created, API has another UID", cache: []client.Object{replicaSet("r1"), deploy("d1", tried)},
			direct: []client.Object{replicaSet("r1"), deploy("d2", tried)}, wantAPIGets: 1},
		{name: "no cache: both from the API", noCache: true,
			direct: []client.Object{replicaSet("r1"), deploy("d1", tried)}, wantAPIGets: 3, wantExcluded: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			direct := workloadtest.NewReader(tt.direct...)
			m := &mutator{direct: direct}
			if !tt.noCache {
				m.cache = workloadtest.NewReader(tt.cache...)
			}
			resp := m.Handle(context.Background(), request(t, podOf(nil)))
			if !resp.Allowed {
				t.Fatalf("pod denied: %+v", resp)
			}
			var excluded string
			if len(resp.Patches) > 0 {
				excluded = resp.Patches[0].Value.(map[string]string)[annotations.ExcludedNodes]
			}
			if excluded != tt.wantExcluded || direct.Gets != tt.wantAPIGets {
				t.Errorf("excluded %q after %d API reads, want %q after %d", excluded, direct.Gets, tt.wantExcluded, tt.wantAPIGets)
			}
		})
	}
}

// TestMutatorPatches checks the patch: the retry state, added to what
// annotations the pod has.
func TestMutatorPatches(t *testing.T) {
	objs := []client.Object{replicaSet("r1"), deploy("d1", map[string]string{
		annotations.SchedulingRetries: "2", annotations.ReschedulingCount: "1", annotations.ScheduledNodes: "a"})}
	m := &mutator{cache: workloadtest.NewReader(objs...), direct: workloadtest.NewReader(objs...)}
	state := map[string]string{annotations.ExcludedNodes: "a", annotations.SchedulingRetries: "2", annotations.ReschedulingCount: "1"}

	resp := m.Handle(context.Background(), request(t, podOf(nil)))
	if !resp.Allowed || len(resp.Patches) != 1 || resp.Patches[0].Path != "/metadata/annotations" ||
		!reflect.DeepEqual(resp.Patches[0].Value, state) {
		t.Errorf("pod without annotations: %+v", resp)
	}
	resp = m.Handle(context.Background(), request(t, podOf(map[string]string{"x": "y"})))
	if !resp.Allowed || len(resp.Patches) != 3 || resp.Patches[0].Path != "/metadata/annotations/shepherd.io~1excluded-nodes" {
		t.Errorf("pod with annotations: %+v", resp.Patches)
	}

	failing := &mutator{direct: fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("apiserver unreachable")
		},
	}).Build()}
	if resp := failing.Handle(context.Background(), request(t, podOf(nil))); !resp.Allowed || len(resp.Patches) != 0 {
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
