package integration

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func kubeconfigWith(t *testing.T, user *clientcmdapi.AuthInfo) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["m"] = &clientcmdapi.Cluster{Server: "https://member.example:6443", CertificateAuthorityData: []byte("CA")}
	kc.AuthInfos["m"] = user
	kc.Contexts["m"] = &clientcmdapi.Context{Cluster: "m", AuthInfo: "m"}
	kc.CurrentContext = "m"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCredentialsWebhook: a credentials Secret whose kubeconfig refers to a
// file or a plugin is refused at admission, naming the field and the
// entry; self-contained ones, Secrets without a kubeconfig and Secrets of
// other namespaces are admitted.
func TestCredentialsWebhook(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	kc, err := kubernetes.NewForConfig(hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"shepherd-system", "elsewhere"} {
		if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
	}
	tokenFile := kubeconfigWith(t, &clientcmdapi.AuthInfo{TokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"})
	cases := []struct {
		name, ns string
		data     map[string][]byte
		want     string // "" admitted
	}{
		{name: "token-file", ns: "shepherd-system", data: map[string][]byte{"kubeconfig": tokenFile}, want: `user "m": tokenFile`},
		{name: "exec", ns: "shepherd-system", data: map[string][]byte{"kubeconfig": kubeconfigWith(t, &clientcmdapi.AuthInfo{
			Exec: &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1"}})}, want: "exec plugin"},
		{name: "garbage", ns: "shepherd-system", data: map[string][]byte{"kubeconfig": []byte("{{")}, want: "data.kubeconfig"},
		{name: "self-contained", ns: "shepherd-system", data: map[string][]byte{"kubeconfig": kubeconfigWith(t, &clientcmdapi.AuthInfo{Token: "t"})}},
		{name: "no-kubeconfig", ns: "shepherd-system", data: map[string][]byte{"token": []byte("t")}},
		{name: "other-namespace", ns: "elsewhere", data: map[string][]byte{"kubeconfig": tokenFile}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: tc.name}, Data: tc.data}
			_, err := kc.CoreV1().Secrets(tc.ns).Create(ctx, s, metav1.CreateOptions{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "data.kubeconfig") {
				t.Fatalf("err = %v, want a refusal containing %q", err, tc.want)
			}
		})
	}
	// An update that makes a stored Secret's kubeconfig unsafe is refused too.
	good, err := kc.CoreV1().Secrets("shepherd-system").Get(ctx, "self-contained", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good.Data["kubeconfig"] = tokenFile
	if _, err := kc.CoreV1().Secrets("shepherd-system").Update(ctx, good, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "tokenFile") {
		t.Fatalf("update to a token file: %v", err)
	}
}
