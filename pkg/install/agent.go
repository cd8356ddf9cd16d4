package install

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/config"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
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

// AgentRBACPropagationRole names the ClusterRole and ClusterRoleBinding
// that let the agent escalate and bind roles and cluster roles in its
// member (`shepherd register --deploy --allow-rbac-propagation`).
const AgentRBACPropagationRole = "shepherd-agent:rbac-propagation"

// AgentRBACPropagation are the opt-in's ClusterRole and binding for the
// agent's ServiceAccount, in apply order: the rules of
// clusterclient.RBACPropagationRules, which let the agent store a
// propagated role or binding granting rights its ClusterRole lacks.
func AgentRBACPropagation() []*unstructured.Unstructured {
	labels := map[string]string{"app.kubernetes.io/part-of": "shepherd"}
	meta := metav1.ObjectMeta{Name: AgentRBACPropagationRole, Labels: labels}
	var out []*unstructured.Unstructured
	for _, o := range []runtime.Object{
		&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: meta, Rules: clusterclient.RBACPropagationRules()},
		&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: meta,
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AgentRBACPropagationRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: AgentNamespace, Name: AgentDeployment}}},
	} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			panic(err) // typed objects always convert
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		out = append(out, u)
	}
	return out
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
