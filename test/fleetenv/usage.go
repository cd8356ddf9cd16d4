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
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: simmetrics.OverrideConfigMap}
		err := c.Get(ctx, key, cm)
		create := apierrors.IsNotFound(err)
		if err != nil && !create {
			return err
		}
		entries := map[string]any{}
		if text := cm.Data[simmetrics.OverrideCPUKey]; text != "" {
			if err := yaml.Unmarshal([]byte(text), &entries); err != nil {
				return fmt.Errorf("key %s: %w", simmetrics.OverrideCPUKey, err)
			}
		}
		if percent < 0 {
			delete(entries, workload)
		} else {
			entries[workload] = percent
		}
		text, err := yaml.Marshal(entries)
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[simmetrics.OverrideCPUKey] = string(text)
		if create {
			cm.Namespace, cm.Name = key.Namespace, key.Name
			return c.Create(ctx, cm)
		}
		return c.Update(ctx, cm)
	})
}
