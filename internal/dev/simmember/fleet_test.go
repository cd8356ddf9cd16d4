package simmember_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadFleetDefaultsOmittedFields(t *testing.T) {
	f, err := simmember.LoadFleet(writeFile(t, `
members:
- name: east
  provider: aws
  region: us-east-1
  zone: us-east-1a
  labels: {env: prod}
- name: west
  nodes: 2
  nodeCPU: 16
  nodeMemory: 64Gi
  nodePods: 250
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Members) != 2 {
		t.Fatalf("got %d members, want 2", len(f.Members))
	}
	east, west := f.Members[0], f.Members[1]
	if east.Nodes != simmember.DefaultNodes || east.NodePods != simmember.DefaultNodePods ||
		east.NodeCPU.Cmp(resource.MustParse(simmember.DefaultNodeCPU)) != 0 ||
		east.NodeMemory.Cmp(resource.MustParse(simmember.DefaultNodeMem)) != 0 {
		t.Errorf("east did not get the default node shape: %+v", east)
	}
	if east.Provider != "aws" || east.Region != "us-east-1" || east.Zone != "us-east-1a" || east.Labels["env"] != "prod" {
		t.Errorf("east topology not loaded: %+v", east)
	}
	if west.Nodes != 2 || west.NodePods != 250 || west.NodeCPU.Value() != 16 || west.NodeMemory.String() != "64Gi" {
		t.Errorf("west node shape not loaded: %+v", west)
	}
}

func TestLoadFleetValidation(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{
			name: "explicit zero nodes",
			yaml: "members:\n- name: a\n- name: b\n  nodes: 0\n",
			want: []string{"members[1].nodes: must be at least 1"},
		},
		{
			name: "several problems are all reported",
			yaml: "members:\n- name: a\n  nodeCPU: 0\n  nodeMemory: -1Gi\n  nodePods: 0\n",
			want: []string{"members[0].nodeCPU: must be positive", "members[0].nodeMemory: must be positive",
				"members[0].nodePods: must be at least 1"},
		},
		{
			name: "too many nodes",
			yaml: "members:\n- name: a\n  nodes: 70000\n",
			want: []string{"members[0].nodes: must be at most 65534"},
		},
		{
			name: "missing name",
			yaml: "members:\n- provider: aws\n",
			want: []string{"members[0].name: is required"},
		},
		{
			name: "name not a DNS label",
			yaml: "members:\n- name: Member_1\n",
			want: []string{`members[0].name: "Member_1" is not a DNS-1123 label`},
		},
		{
			name: "duplicate names",
			yaml: "members:\n- name: a\n- name: b\n- name: a\n",
			want: []string{`members[2].name: "a" is already used by members[0]`},
		},
		{
			name: "zone not a label value",
			yaml: "members:\n- name: a\n  zone: us east\n",
			want: []string{`members[0].zone: "us east" is not a valid label value`},
		},
		{
			name: "bad label key",
			yaml: "members:\n- name: a\n  labels: {\"bad key\": x}\n",
			want: []string{`members[0].labels: key "bad key"`},
		},
		{
			name: "no members",
			yaml: "members: []\n",
			want: []string{"members: must list at least one member"},
		},
		{
			name: "unknown member field",
			yaml: "members:\n- name: a\n  node: 3\n",
			want: []string{`unknown field "node"`},
		},
		{
			name: "unknown top-level field",
			yaml: "member:\n- name: a\n",
			want: []string{`unknown field "member"`},
		},
		{
			name: "bad quantity",
			yaml: "members:\n- name: a\n  nodeMemory: lots\n",
			want: []string{"quantities must match"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := simmember.LoadFleet(writeFile(t, tt.yaml))
			if err == nil {
				t.Fatal("LoadFleet succeeded, want an error")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestLoadFleetMissingFile(t *testing.T) {
	_, err := simmember.LoadFleet(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "reading fleet") {
		t.Fatalf("got %v, want a reading fleet error", err)
	}
}

func TestDefaultFleet(t *testing.T) {
	f := simmember.DefaultFleet(7)
	if err := f.Validate(); err != nil {
		t.Fatalf("default fleet is invalid: %v", err)
	}
	want := []struct{ name, provider, region, zone string }{
		{"member1", "aws", "us-east-1", "us-east-1a"},
		{"member2", "gcp", "europe-west1", "europe-west1-b"},
		{"member3", "azure", "southeastasia", "southeastasia-1"},
	}
	for i, w := range want {
		m := f.Members[i]
		if m.Name != w.name || m.Provider != w.provider || m.Region != w.region || m.Zone != w.zone {
			t.Errorf("members[%d] = %s %s/%s/%s, want %s %s/%s/%s", i, m.Name, m.Provider, m.Region, m.Zone,
				w.name, w.provider, w.region, w.zone)
		}
	}
	zones := map[string]string{}
	for _, m := range f.Members {
		if other, dup := zones[m.Zone]; dup {
			t.Errorf("%s and %s share zone %s", other, m.Name, m.Zone)
		}
		zones[m.Zone] = m.Name
		if m.Nodes != simmember.DefaultNodes {
			t.Errorf("%s has %d nodes, want %d", m.Name, m.Nodes, simmember.DefaultNodes)
		}
	}
	if len(simmember.DefaultFleet(0).Members) != 0 {
		t.Error("DefaultFleet(0) is not empty")
	}
}

func TestMemberSpecValidateWithoutPath(t *testing.T) {
	spec := simmember.DefaultMemberSpec("ok")
	if err := spec.Validate(); err != nil {
		t.Fatalf("default spec is invalid: %v", err)
	}
	spec.NodePods = 0
	if err := spec.Validate(); err == nil || err.Error() != "nodePods: must be at least 1" {
		t.Fatalf("got %v, want nodePods: must be at least 1", err)
	}
}

func TestStartValidatesOptions(t *testing.T) {
	_, err := simmember.Start(t.Context(), simmember.Options{MemberSpec: simmember.DefaultMemberSpec("m")})
	if err == nil || !strings.Contains(err.Error(), "DataDir is required") {
		t.Errorf("without DataDir: got %v", err)
	}
	spec := simmember.DefaultMemberSpec("m")
	spec.Nodes = 0
	_, err = simmember.Start(t.Context(), simmember.Options{MemberSpec: spec, DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "nodes: must be at least 1") {
		t.Errorf("with 0 nodes: got %v", err)
	}
}
