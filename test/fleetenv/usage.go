package fleetenv

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/shepherd-io/shepherd/internal/dev/simmetrics"
)

// SetSimulatedCPU sets the CPU usage of workload ns/name's pods in the
// simulated member c reaches to percent of their requests, at once and
// without a rollout: its entry in the member's override ConfigMap
// (simmetrics.OverrideConfigMap), the other entries kept. A negative
// percent removes the entry.
func SetSimulatedCPU(t testing.TB, c client.Client, ns, name string, percent int) {
	t.Helper()
	if err := setSimulatedCPU(context.Background(), c, ns+"/"+name, percent); err != nil {
		t.Fatalf("setting the simulated CPU of %s/%s to %d%%: %v", ns, name, percent, err)
	}
}

func setSimulatedCPU(ctx context.Context, c client.Client, workload string, percent int) error {
	return updateOverrides(ctx, c, simmetrics.OverrideCPUKey, func(entries map[string]any) {
		if percent < 0 {
			delete(entries, workload)
		} else {
			entries[workload] = percent
		}
	})
}

// SetSimulatedPodsMetric sets the value of the custom Pods metric metric
// of workload ns/name's pods in the simulated member c reaches, at once
// and without a rollout: its entry in the member's override ConfigMap
// (key simmetrics.OverridePodsMetricsKey), the other entries kept. An
// empty value removes the metric from the entry.
func SetSimulatedPodsMetric(t testing.TB, c client.Client, ns, name, metric, value string) {
	t.Helper()
	workload := ns + "/" + name
	err := updateOverrides(context.Background(), c, simmetrics.OverridePodsMetricsKey, func(entries map[string]any) {
		metrics, _ := entries[workload].(map[string]any)
		if metrics == nil {
			metrics = map[string]any{}
		}
		if value == "" {
			delete(metrics, metric)
		} else {
			metrics[metric] = value
		}
		entries[workload] = metrics
	})
	if err != nil {
		t.Fatalf("setting the simulated %s of %s/%s to %q: %v", metric, ns, name, value, err)
	}
}

// updateOverrides changes the entries of key in the member's override
// ConfigMap with change, creating the ConfigMap if it is not there.
func updateOverrides(ctx context.Context, c client.Client, key string, change func(map[string]any)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		name := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: simmetrics.OverrideConfigMap}
		err := c.Get(ctx, name, cm)
		create := apierrors.IsNotFound(err)
		if err != nil && !create {
			return err
		}
		entries := map[string]any{}
		if text := cm.Data[key]; text != "" {
			if err := yaml.Unmarshal([]byte(text), &entries); err != nil {
				return fmt.Errorf("key %s: %w", key, err)
			}
		}
		change(entries)
		text, err := yaml.Marshal(entries)
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[key] = string(text)
		if create {
			cm.Namespace, cm.Name = name.Namespace, name.Name
			return c.Create(ctx, cm)
		}
		return c.Update(ctx, cm)
	})
}
