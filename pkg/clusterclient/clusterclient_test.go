package clusterclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

func kubeconfigBytes(t *testing.T, server string, auth *clientcmdapi.AuthInfo) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["m"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: []byte("CA")}
	kc.AuthInfos["m"] = auth
	kc.Contexts["m"] = &clientcmdapi.Context{Cluster: "m", AuthInfo: "m"}
	kc.CurrentContext = "m"
	b, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// editedKubeconfig is a token kubeconfig changed by edit.
func editedKubeconfig(t *testing.T, edit func(*clientcmdapi.Config)) string {
	t.Helper()
	kc, err := clientcmd.Load(kubeconfigBytes(t, "https://kc.example:6443", &clientcmdapi.AuthInfo{Token: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	edit(kc)
	b, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testCA returns a self-signed CA certificate in PEM, which client-go
// parses when it builds a transport.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func cluster(endpoint string, insecure bool) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1"},
		Spec: clusterv1alpha1.ClusterSpec{
			APIEndpoint:                 endpoint,
			SecretRef:                   &clusterv1alpha1.LocalSecretReference{Namespace: "shepherd-system", Name: "m1"},
			InsecureSkipTLSVerification: insecure,
		},
	}
}

func secret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shepherd-system", Name: "m1"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestRestConfig(t *testing.T) {
	kc := string(kubeconfigBytes(t, "https://kc.example:6443", &clientcmdapi.AuthInfo{Token: "kc-token"}))
	execKC := string(kubeconfigBytes(t, "https://kc.example:6443", &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1"}}))
	cases := []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		secret   *corev1.Secret
		wantErr  string
		host     string
		token    string
		ca       string
		cert     string
		insecure bool
	}{
		// The Cluster says where the member is: a changed spec.apiEndpoint
		// (a member moved behind a new address) is dialled, whatever server
		// the kubeconfig join stored names.
		{name: "apiEndpoint wins over the kubeconfig's server", cluster: cluster("https://moved:1", false), secret: secret(map[string]string{"kubeconfig": kc, "token": "t"}),
			host: "https://moved:1", token: "kc-token", ca: "CA"},
		{name: "the kubeconfig's server without apiEndpoint", cluster: cluster("", false), secret: secret(map[string]string{"kubeconfig": kc}),
			host: "https://kc.example:6443", token: "kc-token", ca: "CA"},
		{name: "kubeconfig insecure drops the CA", cluster: cluster("", true), secret: secret(map[string]string{"kubeconfig": kc}),
			host: "https://kc.example:6443", token: "kc-token", insecure: true},
		{name: "token and CA", cluster: cluster("https://m1:6443", false), secret: secret(map[string]string{"token": "t", "caBundle": "CA2"}),
			host: "https://m1:6443", token: "t", ca: "CA2"},
		{name: "client certificate", cluster: cluster("https://m1:6443", false), secret: secret(map[string]string{"client.crt": "C", "client.key": "K", "caBundle": "CA2"}),
			host: "https://m1:6443", ca: "CA2", cert: "C"},
		{name: "token insecure", cluster: cluster("https://m1:6443", true), secret: secret(map[string]string{"token": "t", "caBundle": "CA2"}),
			host: "https://m1:6443", token: "t", insecure: true},
		{name: "no credentials", cluster: cluster("https://m1:6443", false), secret: secret(map[string]string{"caBundle": "CA"}), wantErr: `has neither "kubeconfig" nor "token"`},
		{name: "cert without key", cluster: cluster("https://m1:6443", false), secret: secret(map[string]string{"client.crt": "C"}), wantErr: "must be set together"},
		{name: "token without endpoint", cluster: cluster("", false), secret: secret(map[string]string{"token": "t"}), wantErr: "spec.apiEndpoint is empty"},
		{name: "bad kubeconfig", cluster: cluster("", false), secret: secret(map[string]string{"kubeconfig": "{{"}), wantErr: `key "kubeconfig"`},
		{name: "exec plugin", cluster: cluster("", false), secret: secret(map[string]string{"kubeconfig": execKC}), wantErr: `user "m": exec plugin`},
		{name: "token file", cluster: cluster("", false), secret: secret(map[string]string{"kubeconfig": string(kubeconfigBytes(t, "https://kc.example:6443",
			&clientcmdapi.AuthInfo{TokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"}))}), wantErr: `user "m": tokenFile`},
		{name: "client certificate files", cluster: cluster("", false), secret: secret(map[string]string{"kubeconfig": string(kubeconfigBytes(t, "https://kc.example:6443",
			&clientcmdapi.AuthInfo{ClientCertificate: "/etc/c.crt", ClientKey: "/etc/c.key"}))}), wantErr: "client-certificate/client-key files"},
		{name: "auth provider", cluster: cluster("", false), secret: secret(map[string]string{"kubeconfig": string(kubeconfigBytes(t, "https://kc.example:6443",
			&clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc"}}))}), wantErr: "auth-provider plugin"},
		{name: "certificate authority file", cluster: cluster("", false), secret: secret(map[string]string{"kubeconfig": editedKubeconfig(t, func(kc *clientcmdapi.Config) {
			kc.Clusters["m"].CertificateAuthorityData, kc.Clusters["m"].CertificateAuthority = nil, "/etc/kubernetes/pki/ca.crt"
		})}), wantErr: "certificate-authority file"},
		{name: "a file reference in an entry the current context does not use", cluster: cluster("", false),
			secret: secret(map[string]string{"kubeconfig": editedKubeconfig(t, func(kc *clientcmdapi.Config) {
				kc.AuthInfos["spare"] = &clientcmdapi.AuthInfo{TokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"}
			})}), wantErr: `user "spare": tokenFile`},
		{name: "nil secret", cluster: cluster("", false), wantErr: "no credentials Secret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := RestConfig(tc.cluster, tc.secret)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tc.host || cfg.BearerToken != tc.token || string(cfg.CAData) != tc.ca ||
				string(cfg.CertData) != tc.cert || cfg.Insecure != tc.insecure {
				t.Errorf("got host=%q token=%q ca=%q cert=%q insecure=%v", cfg.Host, cfg.BearerToken, cfg.CAData, cfg.CertData, cfg.Insecure)
			}
		})
	}
}

// TestCacheRebuildsOnChange: the same *Clients comes back until the
// endpoint, secretRef or Secret revision changes. A fake hub client is
// enough: no member is contacted while building clients.
func TestCacheRebuildsOnChange(t *testing.T) {
	ctx := context.Background()
	cl := cluster("https://m1:6443", false)
	sec := secret(map[string]string{"token": "t", "caBundle": testCA(t)})
	hub := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(sec).Build()
	c := NewCache(hub, Options{RequestTimeout: 3 * time.Second})

	first, err := c.ForCluster(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if first.Config.Timeout != 3*time.Second || first.Config.UserAgent != "shepherd" || first.WatchConfig().Timeout != 0 {
		t.Errorf("timeouts: config %s watch %s, agent %q", first.Config.Timeout, first.WatchConfig().Timeout, first.Config.UserAgent)
	}
	if again, _ := c.ForCluster(ctx, cl); again != first {
		t.Error("unchanged source rebuilt the clients")
	}

	moved := cl.DeepCopy()
	moved.Spec.APIEndpoint = "https://m1-new:6443"
	second, err := c.ForCluster(ctx, moved)
	if err != nil || second == first || second.Config.Host != "https://m1-new:6443" {
		t.Fatalf("endpoint change: %v, same=%v host=%s", err, second == first, second.Config.Host)
	}

	sec.Data["token"] = []byte("rotated")
	if err := hub.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	third, err := c.ForCluster(ctx, moved)
	if err != nil || third == second || third.Config.BearerToken != "rotated" {
		t.Fatalf("secret change: %v, same=%v token=%s", err, third == second, third.Config.BearerToken)
	}

	c.Forget("m1")
	if fourth, _ := c.ForCluster(ctx, moved); fourth == third {
		t.Error("Forget kept the clients")
	}

	gone := moved.DeepCopy()
	gone.Spec.SecretRef.Name = "missing"
	if _, err := c.ForCluster(ctx, gone); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("missing secret: %v, want ErrNoCredentials", err)
	}
	noRef := moved.DeepCopy()
	noRef.Spec.SecretRef = nil
	if _, err := c.ForCluster(ctx, noRef); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("no secretRef: %v, want ErrNoCredentials", err)
	}
}

// TestIsUnreachable dials a closed local port for a real connection error.
func TestIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := &rest.Config{Host: "https://" + addr, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cl, err := newClients("closed", cfg, Options{RequestTimeout: 2 * time.Second}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.Kubernetes.Discovery().ServerVersion()
	if !IsUnreachable(err) {
		t.Errorf("closed port: IsUnreachable(%v) = false", err)
	}
	wrapped := fmt.Errorf("applying: %w", err)
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{wrapped, true},
		{context.DeadlineExceeded, true},
		{apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x"), false},
		{apierrors.NewServiceUnavailable("etcd down"), false},
		{errors.New("invalid manifest"), false},
	} {
		if got := IsUnreachable(tc.err); got != tc.want {
			t.Errorf("IsUnreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestCacheReadsSecretsOnlyFromItsNamespace: a Cluster naming a Secret of
// another namespace gets no clients, and the Secret is not read.
func TestCacheReadsSecretsOnlyFromItsNamespace(t *testing.T) {
	other := secret(map[string]string{"token": "t"})
	other.Namespace = "kube-system"
	hub := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(other).Build()
	for _, tc := range []struct {
		name, cacheNS string
	}{{"default namespace", ""}, {"configured namespace", "fleet-credentials"}} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster("https://m1:6443", false)
			c.Spec.SecretRef.Namespace = "kube-system"
			_, err := NewCache(hub, Options{SecretsNamespace: tc.cacheNS}).ForCluster(context.Background(), c)
			if err == nil || !errors.Is(err, ErrNoCredentials) || !strings.Contains(err.Error(), `names namespace "kube-system"`) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestLocalCacheServesOneCluster: an agent's cache hands out its own
// member's clients for its cluster, and nothing for any other.
func TestLocalCacheServesOneCluster(t *testing.T) {
	c, err := NewLocal("edge-1", &rest.Config{Host: "https://127.0.0.1:1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	own := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}}
	got, err := c.ForCluster(context.Background(), own)
	if err != nil || got == nil || got.Cluster != "edge-1" {
		t.Fatalf("ForCluster(edge-1) = %v, %v", got, err)
	}
	c.Forget("edge-1")
	again, err := c.ForCluster(context.Background(), own)
	if err != nil || again != got {
		t.Errorf("after Forget: %v, %v; want the same clients", again, err)
	}
	other := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-2"}}
	if _, err := c.ForCluster(context.Background(), other); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("ForCluster(edge-2) = %v, want ErrNoCredentials", err)
	}
}
