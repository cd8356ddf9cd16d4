package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// waitTimeout and eventually: the suites' one wait (fleetenv).
const waitTimeout = fleetenv.WaitTimeout

var eventually = fleetenv.Eventually

// applyYAML server-side applies a YAML stream to the hub.
func applyYAML(t *testing.T, yaml string) { t.Helper(); fleetenv.ApplyYAML(t, hub, "e2e", yaml) }

func createNamespace(t *testing.T, name string) { t.Helper(); fleetenv.CreateNamespace(t, hub, name) }

// binding returns the ResourceBinding of a namespaced template.
func binding(ns, name, kind string) (*workv1alpha1.ResourceBinding, error) {
	rb := &workv1alpha1.ResourceBinding{}
	err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name + "-" + strings.ToLower(kind)}, rb)
	return rb, err
}

// targets returns the binding's active targets: cluster -> replicas.
func targets(b *workv1alpha1.ResourceBinding) map[string]int32 {
	return fleetenv.ActiveTargets(b.Spec.Clusters)
}

func sum(m map[string]int32) int32 {
	var s int32
	for _, v := range m {
		s += v
	}
	return s
}

// waitPlaced waits until the binding is Scheduled and check accepts its
// targets, and returns the binding.
func waitPlaced(t *testing.T, ns, name, kind string, check func(map[string]int32) error) *workv1alpha1.ResourceBinding {
	t.Helper()
	var rb *workv1alpha1.ResourceBinding
	eventually(t, fmt.Sprintf("%s/%s placed", ns, name), func() error {
		var err error
		if rb, err = binding(ns, name, kind); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha1.ConditionScheduled) {
			return fmt.Errorf("not scheduled: %+v", rb.Status.Conditions)
		}
		return check(targets(rb))
	})
	return rb
}

// inMember reads obj from a member into obj.
func inMember(cluster string, key client.ObjectKey, obj client.Object) error {
	return memberCl[cluster].Get(context.Background(), key, obj)
}

// goneFromMember checks obj no longer exists in the member.
func goneFromMember(cluster string, key client.ObjectKey, obj client.Object) error {
	err := inMember(cluster, key, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%s still in %s", key, cluster)
}

func deploymentYAML(ns, name string, replicas int) string {
	return fleetenv.DeploymentYAML(ns, name, replicas)
}

// policyYAML renders a PropagationPolicy for one Deployment with the given
// placement (YAML indented under placement:).
func policyYAML(ns, name, kind, target, placement string) string {
	return fmt.Sprintf(`apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: %s
  namespace: %s
spec:
  resourceSelectors:
  - {apiVersion: %s, kind: %s, name: %s}
  placement:
%s`, name, ns, apiVersionOf(kind), kind, target, indent(placement, "    "))
}

func apiVersionOf(kind string) string {
	switch kind {
	case "Deployment":
		return "apps/v1"
	case "Job":
		return "batch/v1"
	default:
		return "v1"
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// removeWorkloads deletes the Deployments of ns on the hub when the test
// ends and waits until the members have none left: a test that fills
// members with large replicas must give the room back to the tests after
// it, which the scheduler (counting room node by node and replicas in
// flight) would otherwise find taken.
func removeWorkloads(t *testing.T, ns string, clusters ...string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		if err := hub.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(ns)); err != nil {
			t.Errorf("deleting the Deployments of %s: %v", ns, err)
			return
		}
		for _, c := range clusters {
			eventually(t, "the Deployments of "+ns+" gone from "+c, func() error {
				var list appsv1.DeploymentList
				if err := memberCl[c].List(ctx, &list, client.InNamespace(ns)); err != nil {
					return err
				}
				if len(list.Items) > 0 {
					return fmt.Errorf("%d left", len(list.Items))
				}
				return nil
			})
		}
	})
}
