package install

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/config"
)

// Names of what config/agent installs in a member.
const (
	AgentNamespace = "shepherd-agent"
	// AgentDeployment is the agent's Deployment (and ServiceAccount).
	AgentDeployment = "shepherd-agent"
	// AgentHubSecret holds the agent's kubeconfig for the hub (key
	// "kubeconfig"); AgentConfigMap its cluster name (key "cluster").
	AgentHubSecret = "shepherd-agent-hub"
	AgentConfigMap = "shepherd-agent"
)

// AgentManifests are the objects that run the agent of Pull cluster
// cluster in its member: config/agent (with the image set unless image is
// empty), the Secret with the agent's hub kubeconfig and the ConfigMap
// naming the cluster, in apply order.
func AgentManifests(cluster, image string, hubKubeconfig []byte) ([]*unstructured.Unstructured, error) {
	objs, err := renderWithImage(config.AgentKustomization, AgentNamespace, AgentDeployment, image)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"app.kubernetes.io/part-of": "shepherd"}
	for _, o := range []runtime.Object{
		&corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentHubSecret, Labels: labels},
			Type:       corev1.SecretTypeOpaque, Data: map[string][]byte{"kubeconfig": hubKubeconfig}},
		&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentConfigMap, Labels: labels},
			Data:       map[string]string{"cluster": cluster}},
	} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		objs = append(objs, u)
	}
	return Ordered(objs), nil
}

// ApplyAgentGuard server-side applies config/pull to the hub: the
// admission policy that keeps the updates Pull clusters' agents make to
// their Works to the finalizers (`shepherd register` calls it, so a hub
// installed another way is guarded too).
func ApplyAgentGuard(ctx context.Context, c client.Client) error {
	objs, err := Render(config.Manifests, config.PullKustomization)
	if err != nil {
		return err
	}
	return Apply(ctx, c, objs, io.Discard)
}
