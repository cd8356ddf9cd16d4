package workstatus

import (
	corev1 "k8s.io/api/core/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// unschedulableComponents breaks a workload's unschedulable pods down by
// the component each runs (of, from its labels): for each of names, the
// workload's components in their order, its pods counted by
// unschedulable, leaving out components with none. A pod of no component
// counts in the workload's total only. names has at most
// interpreter.MaxComponents entries (Components refuses more), which
// bounds the list the Work's API allows.
func unschedulableComponents(pods []*corev1.Pod, names []string, of interpreter.PodComponent) []workv1alpha1.UnschedulableComponent {
	byName := make(map[string][]*corev1.Pod, len(names))
	for _, pod := range pods {
		if name := of(pod.Labels); name != "" {
			byName[name] = append(byName[name], pod)
		}
	}
	var out []workv1alpha1.UnschedulableComponent
	for _, name := range names {
		if n, since := unschedulable(byName[name]); n > 0 {
			out = append(out, workv1alpha1.UnschedulableComponent{Name: name, Replicas: n, Since: *since})
		}
	}
	return out
}
