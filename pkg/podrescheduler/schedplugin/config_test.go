package schedplugin_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/schedplugin"
)

var configDir = filepath.Join("..", "..", "..", "config", "podrescheduler")

// TestSchedulerConfig loads the shipped profile the way `shepherd
// kube-scheduler --config` does and checks it is valid and enables the
// plugin.
func TestSchedulerConfig(t *testing.T) {
	file := filepath.Join(configDir, "scheduler-config.yaml")
	cfg, err := options.LoadConfigFromFile(klog.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Profiles) != 1 {
		t.Fatalf("want one profile, got %d", len(cfg.Profiles))
	}
	enabled := cfg.Profiles[0].Plugins.MultiPoint.Enabled
	if !slices.ContainsFunc(enabled, func(p config.Plugin) bool { return p.Name == schedplugin.Name }) {
		t.Errorf("%s does not enable %s at multiPoint: %+v", file, schedplugin.Name, enabled)
	}
}

// TestSchedulerConfigMap keeps the ConfigMap in deployment.yaml the same as
// scheduler-config.yaml (minus the file's comments).
func TestSchedulerConfigMap(t *testing.T) {
	file, err := os.ReadFile(filepath.Join(configDir, "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	deploy, err := os.ReadFile(filepath.Join(configDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for doc := range bytes.SplitSeq(deploy, []byte("\n---\n")) {
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal(doc, &cm); err != nil || cm.Kind != "ConfigMap" {
			continue
		}
		var fromFile, fromCM any
		if err := yaml.Unmarshal(file, &fromFile); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(cm.Data["scheduler-config.yaml"]), &fromCM); err != nil {
			t.Fatal(err)
		}
		if !equalJSON(t, fromFile, fromCM) {
			t.Errorf("ConfigMap %s differs from scheduler-config.yaml", cm.Name)
		}
		return
	}
	t.Fatal("no ConfigMap in deployment.yaml")
}

func equalJSON(t *testing.T, a, b any) bool {
	ja, err := yaml.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := yaml.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}
