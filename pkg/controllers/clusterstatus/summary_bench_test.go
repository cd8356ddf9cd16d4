package clusterstatus

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkSummarize: a member of 50 nodes running 2,000 pods, all bound,
// against the same member in a burst with 1,000 of them not bound yet,
// whose room the node model takes node by node (takeUnbound).
func BenchmarkSummarize(b *testing.B) {
	nodes := make([]*corev1.Node, 50)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("n%02d", i), corev1.ConditionTrue, rl("cpu", "64", "memory", "256Gi", "pods", "110"))
	}
	for _, unbound := range []int{0, 1000} {
		pods := make([]*corev1.Pod, 2000)
		for i := range pods {
			on := nodes[i%len(nodes)].Name
			if i < unbound {
				on = ""
			}
			pods[i] = pod(on, corev1.PodRunning, rl("cpu", fmt.Sprintf("%dm", 100+i%7*50), "memory", "128Mi"))
		}
		b.Run(fmt.Sprintf("unbound=%d", unbound), func(b *testing.B) {
			for b.Loop() {
				summarize(nodes, pods)
			}
		})
	}
}
