package crd

import (
	"bytes"
	"testing"

	mcscrd "sigs.k8s.io/mcs-api/config/crd"
)

func TestCRDsDecodeAndCoverEveryKind(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"clusters.cluster.shepherd.io":                         "Cluster",
		"propagationpolicies.policy.shepherd.io":               "Namespaced",
		"clusterpropagationpolicies.policy.shepherd.io":        "Cluster",
		"overridepolicies.policy.shepherd.io":                  "Namespaced",
		"clusteroverridepolicies.policy.shepherd.io":           "Cluster",
		"resourcebindings.work.shepherd.io":                    "Namespaced",
		"clusterresourcebindings.work.shepherd.io":             "Cluster",
		"works.work.shepherd.io":                               "Namespaced",
		"rescheduletasks.task.shepherd.io":                     "Cluster",
		"healthinterpreters.config.shepherd.io":                "Cluster",
		"resourceinterpretercustomizations.config.shepherd.io": "Cluster",
		"exportedservices.multicluster.shepherd.io":            "Namespaced",
		"federatedhpas.autoscaling.shepherd.io":                "Namespaced",
		"cronfederatedhpas.autoscaling.shepherd.io":            "Namespaced",
	}
	got := map[string]string{}
	for _, c := range crds {
		got[c.Name] = string(c.Spec.Scope)
		if len(c.Spec.Versions) != 1 || c.Spec.Versions[0].Name != "v1alpha1" {
			t.Errorf("%s: want exactly version v1alpha1, got %+v", c.Name, c.Spec.Versions)
		}
	}
	for name, scope := range want {
		if got[name] != scope {
			t.Errorf("CRD %s: scope %q, want %q", name, got[name], scope)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d CRDs, want %d: %v", len(got), len(want), got)
	}
}

// TestServiceExportCRDIsTheModules: the hub's ServiceExport CRD is the one
// of the sigs.k8s.io/mcs-api version in go.mod, byte for byte (`make
// generate` copies it), and Hub serves it beside Shepherd's.
func TestServiceExportCRDIsTheModules(t *testing.T) {
	if !bytes.Equal(mcsServiceExport, mcscrd.ServiceExportCRD) {
		t.Fatal("config/crd/mcs/multicluster.x-k8s.io_serviceexports.yaml differs from sigs.k8s.io/mcs-api's: run make generate")
	}
	hub, err := Hub()
	if err != nil {
		t.Fatal(err)
	}
	own, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(hub) != len(own)+1 || hub[len(hub)-1].Name != "serviceexports.multicluster.x-k8s.io" {
		t.Fatalf("Hub: %d CRDs, last %s; want Shepherd's %d and the ServiceExport CRD", len(hub), hub[len(hub)-1].Name, len(own))
	}
}
