package controlplane

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Client rate limits for the admin config. client-go's defaults (5 QPS)
// make integration tests and bulk CRD installs needlessly slow against a
// local apiserver that nobody else uses.
const (
	adminQPS   = 100
	adminBurst = 200
)

// adminRestConfig returns a client config authenticating with the admin
// client certificate (system:masters) against the apiserver at host:port.
func adminRestConfig(serverURL string, p *pki) *rest.Config {
	return &rest.Config{
		Host: serverURL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   p.CAPEM,
			CertData: p.AdminCertPEM,
			KeyData:  p.AdminKeyPEM,
		},
		QPS:   adminQPS,
		Burst: adminBurst,
	}
}

// writeKubeconfig writes a self-contained kubeconfig (certificates
// embedded) for cfg to path. It is rewritten on every start because the
// apiserver port may change; the credentials stay the same.
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[KubeconfigName] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[KubeconfigName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts[KubeconfigName] = &clientcmdapi.Context{
		Cluster:  KubeconfigName,
		AuthInfo: KubeconfigName,
	}
	kc.CurrentContext = KubeconfigName
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encoding kubeconfig: %w", err)
	}
	return writeAtomic(path, data, 0o600)
}
