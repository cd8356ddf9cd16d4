package clusterstatus

import (
	"testing"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func node(name string, ready corev1.ConditionStatus, alloc corev1.ResourceList) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Allocatable: alloc, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}},
	}}
}

func pod(nodeName string, phase corev1.PodPhase, requests ...corev1.ResourceList) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: nodeName}, Status: corev1.PodStatus{Phase: phase}}
	for _, r := range requests {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{Requests: r}})
	}
	return p
}

func TestSummarize(t *testing.T) {
	nodes := []*corev1.Node{
		node("a", corev1.ConditionTrue, rl("cpu", "4", "memory", "8Gi", "pods", "110")),
		node("b", corev1.ConditionTrue, rl("cpu", "2500m", "memory", "4Gi", "pods", "110")),
		node("c", corev1.ConditionFalse, rl("cpu", "64", "memory", "256Gi", "pods", "110")),
		{ObjectMeta: metav1.ObjectMeta{Name: "no-conditions"}, Status: corev1.NodeStatus{Allocatable: rl("cpu", "1")}},
	}
	sidecar := pod("a", corev1.PodRunning, rl("cpu", "500m"))
	always := corev1.ContainerRestartPolicyAlways
	sidecar.Spec.InitContainers = []corev1.Container{{RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "64Mi")}}}
	pods := []*corev1.Pod{
		pod("a", corev1.PodRunning, rl("cpu", "1", "memory", "1Gi"), rl("cpu", "250m")),
		pod("b", corev1.PodPending, rl("cpu", "1")),
		pod("c", corev1.PodRunning, rl("memory", "2Gi")), // on a NotReady node: still allocated
		pod("a", corev1.PodSucceeded, rl("cpu", "8")),
		pod("b", corev1.PodFailed, rl("cpu", "8")),
		pod("", corev1.PodPending, rl("cpu", "2", "nvidia.com/gpu", "1")),
		sidecar,
	}
	ns, rs := summarize(nodes, pods)
	if ns.TotalNum != 4 || ns.ReadyNum != 2 {
		t.Errorf("node summary %+v", ns)
	}
	for _, tc := range []struct {
		name      string
		got, want corev1.ResourceList
	}{
		{"allocatable", rs.Allocatable, rl("cpu", "6500m", "memory", "12Gi", "pods", "220")},
		{"allocated", rs.Allocated, rl("cpu", "2850m", "memory", "3136Mi", "pods", "4")},
		{"allocating", rs.Allocating, rl("cpu", "2", "nvidia.com/gpu", "1", "pods", "1")},
	} {
		if len(tc.got) != len(tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
			continue
		}
		for k, q := range tc.want {
			if g := tc.got[k]; g.Cmp(q) != 0 || g.String() != q.String() {
				t.Errorf("%s[%s] = %s, want %s", tc.name, k, g.String(), q.String())
			}
		}
	}
	// The node model: the Ready nodes' room after the pods bound to them
	// (b's pending pod is bound, so it takes b's room); c is NotReady.
	wantNodes := []clusterv1alpha1.NodeGroup{
		{Count: 1, Free: rl("cpu", "1500m", "memory", "4Gi", "pods", "109")},
		{Count: 1, Free: rl("cpu", "2150m", "memory", "7104Mi", "pods", "108")},
	}
	if !sameGroups(rs.Nodes, wantNodes) {
		t.Errorf("nodes = %v, want %v", rs.Nodes, wantNodes)
	}
	empty, ers := summarize(nil, nil)
	if empty.TotalNum != 0 || len(ers.Allocatable) != 0 {
		t.Errorf("empty member: %+v %+v", empty, ers)
	}
}

func TestStripKeepsWhatSummarizeReads(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	p := pod("a", corev1.PodRunning, rl("cpu", "1"))
	p.Name, p.Namespace, p.Labels = "p", "ns", map[string]string{"big": "label"}
	p.Spec.InitContainers = []corev1.Container{{Name: "side", Image: "img", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}}}
	p.Spec.Overhead = rl("cpu", "10m")
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady}}
	got, err := strip(p)
	if err != nil {
		t.Fatal(err)
	}
	sp := got.(*corev1.Pod)
	if sp.Labels != nil || sp.Status.Conditions != nil || sp.Spec.InitContainers[0].Image != "" {
		t.Errorf("not stripped: %+v", sp)
	}
	_, a := summarize(nil, []*corev1.Pod{p})
	_, b := summarize(nil, []*corev1.Pod{sp})
	if q := b.Allocated[corev1.ResourceCPU]; q.Cmp(a.Allocated[corev1.ResourceCPU]) != 0 || q.String() != "2010m" {
		t.Errorf("stripped pod sums to %s, original %v", q.String(), a.Allocated)
	}
	n := node("a", corev1.ConditionTrue, rl("cpu", "1"))
	n.Status.Images = []corev1.ContainerImage{{Names: []string{"huge"}}}
	sn, _ := strip(n)
	if len(sn.(*corev1.Node).Status.Images) != 0 || !nodeReady(sn.(*corev1.Node)) {
		t.Errorf("node strip: %+v", sn)
	}
}

// TestConditionTaintsKeepNodesOutOfTheModel: a Ready node that a condition
// taint closes to new pods has no room in the model (its allocatable still
// counts in the sums); taints a person sets, and the NoExecute taints every
// pod tolerates, leave it in.
func TestConditionTaintsKeepNodesOutOfTheModel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		taints  []corev1.Taint
		inModel bool
	}{
		{"no taint", nil, true},
		{"not-ready NoSchedule", []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}, false},
		{"not-ready NoExecute alone (tolerated by every pod)", []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}}, true},
		{"unreachable NoSchedule and NoExecute", []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}, {Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}}, false},
		{"unschedulable", []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}, false},
		{"memory pressure", []corev1.Taint{{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}}, false},
		{"disk pressure", []corev1.Taint{{Key: corev1.TaintNodeDiskPressure, Effect: corev1.TaintEffectNoSchedule}}, false},
		{"pid pressure", []corev1.Taint{{Key: corev1.TaintNodePIDPressure, Effect: corev1.TaintEffectNoSchedule}}, false},
		{"network unavailable", []corev1.Taint{{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}}, false},
		{"pressure PreferNoSchedule only", []corev1.Taint{{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectPreferNoSchedule}}, true},
		{"a person's taint", []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := node("a", corev1.ConditionTrue, rl("cpu", "4", "pods", "10"))
			n.Spec.Taints = tc.taints
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "other", Effect: corev1.TaintEffectNoSchedule})
			for _, in := range []*corev1.Node{n, stripped(t, n)} {
				ns, rs := summarize([]*corev1.Node{in}, nil)
				if got := len(rs.Nodes) == 1; got != tc.inModel {
					t.Errorf("in the model = %v, want %v (groups %v)", got, tc.inModel, rs.Nodes)
				}
				if q := rs.Allocatable[corev1.ResourceCPU]; ns.ReadyNum != 1 || q.String() != "4" {
					t.Errorf("the sums changed: ready %d, allocatable cpu %s", ns.ReadyNum, q.String())
				}
			}
		})
	}
}

func stripped(t *testing.T, n *corev1.Node) *corev1.Node {
	t.Helper()
	s, err := strip(n)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*corev1.Node)
}
