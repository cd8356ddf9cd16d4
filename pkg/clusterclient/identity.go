package clusterclient

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// IdentityNamespace is the namespace whose UID identifies a member cluster:
// every cluster has it, it is never deleted, and a new cluster gets a new
// one. Karmada identifies clusters the same way.
const IdentityNamespace = "kube-system"

// Identity returns the member's identity, the UID of its kube-system
// namespace.
func Identity(ctx context.Context, kc kubernetes.Interface) (string, error) {
	ns, err := kc.CoreV1().Namespaces().Get(ctx, IdentityNamespace, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return string(ns.UID), nil
}
