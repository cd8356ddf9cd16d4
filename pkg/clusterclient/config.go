// Package clusterclient builds clients for member clusters from their
// Cluster object and credentials Secret on the hub, and caches them per
// cluster so that every controller shares one connection pool, one
// discovery cache and one REST mapper per member.
package clusterclient

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

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
// credentials Secret. A "kubeconfig" key is used with its current context;
// otherwise "token" plus "caBundle" (and optional "client.crt" /
// "client.key"). Either way the member is dialled at spec.apiEndpoint when
// it is set: the Cluster is where the fleet says where a member is, so a
// changed endpoint takes effect and the endpoint shown is the one used (a
// kubeconfig's own server counts only for a Cluster without one).
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
		if cluster.Spec.APIEndpoint != "" {
			cfg.Host = cluster.Spec.APIEndpoint
		}
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
// Only self-contained credentials are accepted (see selfContained).
func kubeconfigRestConfig(data []byte) (*rest.Config, error) {
	kc, err := clientcmd.Load(data)
	if err != nil {
		return nil, err
	}
	if err := selfContained(kc); err != nil {
		return nil, err
	}
	return clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
}

// ValidateKubeconfig says what is wrong with a credentials Secret's
// kubeconfig: that it does not parse, or that it refers to credentials
// outside itself. The admission webhook and the client builder apply the
// same rule.
func ValidateKubeconfig(data []byte) error {
	kc, err := clientcmd.Load(data)
	if err != nil {
		return err
	}
	return selfContained(kc)
}

// selfContained refuses a kubeconfig whose credentials are not all in the
// kubeconfig itself. A file reference (tokenFile, client-certificate,
// client-key, certificate-authority) would make the hub read a file of its
// own host and send it to whatever server the Cluster names: in a real
// deployment, the controller's own ServiceAccount token. Exec and
// auth-provider plugins would run a command on the hub. Every user and
// cluster entry is checked, not only the current context's, so that no
// entry can be switched to later.
func selfContained(kc *clientcmdapi.Config) error {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(kc.AuthInfos)) {
		u := kc.AuthInfos[name]
		if u.TokenFile != "" {
			problems = append(problems, fmt.Sprintf("user %q: tokenFile", name))
		}
		if u.ClientCertificate != "" || u.ClientKey != "" {
			problems = append(problems, fmt.Sprintf("user %q: client-certificate/client-key files (embed them as client-certificate-data/client-key-data)", name))
		}
		if u.Exec != nil {
			problems = append(problems, fmt.Sprintf("user %q: exec plugin", name))
		}
		if u.AuthProvider != nil {
			problems = append(problems, fmt.Sprintf("user %q: auth-provider plugin", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(kc.Clusters)) {
		if c := kc.Clusters[name]; c.CertificateAuthority != "" {
			problems = append(problems, fmt.Sprintf("cluster %q: certificate-authority file (embed it as certificate-authority-data)", name))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the kubeconfig refers to credentials outside itself, which the hub never uses: %s; "+
			"store a self-contained kubeconfig (a token or embedded certificates), e.g. the one `shepherd join` writes", strings.Join(problems, "; "))
	}
	return nil
}
