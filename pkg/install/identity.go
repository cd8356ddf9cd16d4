package install

import (
	"context"
	"fmt"
	"io"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/config"
)

// ServiceAccountUser is the user the controller manager's ServiceAccount
// token authenticates as.
const ServiceAccountUser = "system:serviceaccount:" + Namespace + ":" + Deployment

// IdentityManifests are the objects of config/default that let the
// controller manager run under its ServiceAccount without the rest of an
// installation (no Deployment, no webhook): its namespace, ServiceAccount,
// RBAC, and the priority levels and FlowSchemas its requests are
// classified by (config.IdentityKustomizations), in apply order.
func IdentityManifests() ([]*unstructured.Unstructured, error) {
	all, err := Render(config.Manifests, config.DefaultKustomization)
	if err != nil {
		return nil, err
	}
	ns := find(all, "Namespace", "", Namespace)
	if ns == nil {
		return nil, fmt.Errorf("config/%s has no Namespace %s", config.DefaultKustomization, Namespace)
	}
	objs := []*unstructured.Unstructured{ns}
	for _, dir := range config.IdentityKustomizations {
		part, err := Render(config.Manifests, dir)
		if err != nil {
			return nil, err
		}
		objs = append(objs, part...)
	}
	return Ordered(objs), nil
}

// ApplyIdentity server-side applies IdentityManifests to the hub (as
// Install applies them: same field manager).
func ApplyIdentity(ctx context.Context, c client.Client) error {
	objs, err := IdentityManifests()
	if err != nil {
		return err
	}
	return Apply(ctx, c, objs, io.Discard)
}

// ServiceAccountConfig is a configuration of the hub admin talks to that
// holds nothing but a token of the controller manager's ServiceAccount,
// valid for ttl (TokenRequest), and admin's CA: what the Deployment's pod
// has, so its requests meet RBAC and API Priority and Fairness as they do
// installed (a system:masters client bypasses the one and is exempt from
// the other). The ServiceAccount must exist (ApplyIdentity).
func ServiceAccountConfig(ctx context.Context, admin *rest.Config, ttl time.Duration) (*rest.Config, error) {
	kc, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	tr, err := kc.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, Deployment,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl / time.Second))}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("issuing a token of the ServiceAccount %s/%s: %w", Namespace, Deployment, err)
	}
	return &rest.Config{
		Host:            admin.Host,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile},
	}, nil
}
