// Package clusterclient builds clients for member clusters from their
// Cluster object and credentials Secret on the hub, and caches them per
// cluster so that every controller shares one connection pool, one
// discovery cache and one REST mapper per member.
package clusterclient

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// Keys of a member's credentials Secret. A Secret holds either a whole
// kubeconfig, or a bearer token with the CA bundle (and optionally a client
// certificate pair) for the Cluster's spec.apiEndpoint.
const (
	SecretKeyKubeconfig = "kubeconfig"
	SecretKeyToken      = "token"
	SecretKeyCABundle   = "caBundle"
	SecretKeyClientCert = "client.crt"
	SecretKeyClientKey  = "client.key"
)

// Defaults for member clients. They are deliberately small: a member that
// does not answer must cost a worker seconds, not minutes.
const (
	DefaultRequestTimeout = 10 * time.Second
	DefaultQPS            = 50
	DefaultBurst          = 100
	userAgent             = "shepherd"
)

// RestConfig builds the client config of a member from its Cluster and
// credentials Secret. A "kubeconfig" key is used as-is with its current
// context (its server wins over spec.apiEndpoint, which join copies from it
// anyway); otherwise "token" plus "caBundle" (and optional "client.crt" /
// "client.key") are used against spec.apiEndpoint.
// spec.insecureSkipTLSVerification is honoured in both cases.
//
// The returned config has no timeout, rate limit or user agent: Cache sets
// those, because they depend on what the client is used for.
func RestConfig(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	if secret == nil {
		return nil, errors.New("no credentials Secret")
	}
	var cfg *rest.Config
	if kc, ok := secret.Data[SecretKeyKubeconfig]; ok {
		c, err := kubeconfigRestConfig(kc)
		if err != nil {
			return nil, fmt.Errorf("secret %s/%s key %q: %w", secret.Namespace, secret.Name, SecretKeyKubeconfig, err)
		}
		cfg = c
	} else {
		c, err := tokenConfig(cluster, secret)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	if cluster.Spec.InsecureSkipTLSVerification {
		// client-go refuses a config that both verifies against a CA and
		// skips verification.
		cfg.Insecure = true
		cfg.CAData, cfg.CAFile = nil, ""
	}
	return cfg, nil
}

func tokenConfig(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	if cluster.Spec.APIEndpoint == "" {
		return nil, errors.New("spec.apiEndpoint is empty")
	}
	token := secret.Data[SecretKeyToken]
	cert, key := secret.Data[SecretKeyClientCert], secret.Data[SecretKeyClientKey]
	if len(token) == 0 && len(cert) == 0 {
		return nil, fmt.Errorf("secret %s/%s has neither %q nor %q nor %q", secret.Namespace, secret.Name,
			SecretKeyKubeconfig, SecretKeyToken, SecretKeyClientCert)
	}
	if (len(cert) == 0) != (len(key) == 0) {
		return nil, fmt.Errorf("secret %s/%s: %q and %q must be set together", secret.Namespace, secret.Name,
			SecretKeyClientCert, SecretKeyClientKey)
	}
	return &rest.Config{
		Host:        cluster.Spec.APIEndpoint,
		BearerToken: string(token),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   secret.Data[SecretKeyCABundle],
			CertData: cert,
			KeyData:  key,
		},
	}, nil
}

// kubeconfigRestConfig builds a config from a kubeconfig's current context.
// Exec and auth-provider plugins are refused up front: they would run a
// command on the hub, which has neither the binary nor the user's login.
func kubeconfigRestConfig(data []byte) (*rest.Config, error) {
	kc, err := clientcmd.Load(data)
	if err != nil {
		return nil, err
	}
	if ctx, ok := kc.Contexts[kc.CurrentContext]; ok {
		if user, ok := kc.AuthInfos[ctx.AuthInfo]; ok && (user.Exec != nil || user.AuthProvider != nil) {
			return nil, errors.New("exec and auth-provider credentials are not supported on the hub: use a token or a client certificate")
		}
	}
	return clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
}
