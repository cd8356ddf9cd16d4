package clusterstatus

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestAPIEnablements(t *testing.T) {
	d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	d.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod"}, {Name: "pods/status", Kind: "Pod"}, {Name: "configmaps", Kind: "ConfigMap"}}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment"}, {Name: "deployments/scale", Kind: "Scale"}}},
	}
	got, err := apiEnablements(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].GroupVersion != "apps/v1" || len(got[0].Resources) != 1 ||
		got[1].GroupVersion != "v1" || len(got[1].Resources) != 2 || got[1].Resources[0].Name != "configmaps" {
		t.Errorf("enablements %+v", got)
	}
}

func TestFailedChecks(t *testing.T) {
	body := []byte("[+]ping ok\n[-]etcd-readiness failed: reason withheld\n[+]log ok\n[-]informer-sync failed: reason withheld\nreadyz check failed")
	if got := failedChecks(body, nil); got != "etcd-readiness failed, informer-sync failed" {
		t.Errorf("failedChecks = %q", got)
	}
	if got := failedChecks([]byte(" overloaded \n"), nil); got != "overloaded" {
		t.Errorf("plain body: %q", got)
	}
	if got := truncate(string(make([]byte, 2000))); len(got) != maxMessage {
		t.Errorf("truncate to %d", len(got))
	}
}

func TestDisplayVersion(t *testing.T) {
	for _, tc := range []struct {
		in   version.Info
		want string
	}{
		{version.Info{GitVersion: "v1.36.3", Major: "1", Minor: "36"}, "v1.36.3"},
		{version.Info{GitVersion: "v0.0.0-master+$Format:%H$", Major: "1", Minor: "36"}, "v1.36"},
		{version.Info{GitVersion: "v0.0.0-master+$Format:%H$"}, "v0.0.0-master+$Format:%H$"},
	} {
		if got := displayVersion(&tc.in); got != tc.want {
			t.Errorf("displayVersion(%+v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
