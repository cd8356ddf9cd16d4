package crd

import "testing"

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
