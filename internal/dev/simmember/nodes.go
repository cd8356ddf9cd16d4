package simmember

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Node markings. kwok manages exactly the nodes with kwokNodeAnnotation
// (the selector kwokctl passes to its kwok controller); LabelNodeType is
// the label kwok's documentation and examples put on fake nodes, handy for
// node selectors and `kubectl get nodes -l type=kwok`.
const (
	kwokNodeAnnotation      = "kwok.x-k8s.io/node"
	kwokNodeAnnotationValue = "fake"
	LabelNodeType           = "type"
	NodeTypeKwok            = "kwok"
)

// NodeName is the name of the i-th (0-based) node of member.
func NodeName(member string, i int) string { return member + "-node-" + strconv.Itoa(i) }

// nodeIP is the InternalIP of the i-th node: 10.240.0.0/16, one address
// per node (MemberSpec validation bounds the node count accordingly).
func nodeIP(i int) string {
	n := i + 1
	return netip.AddrFrom4([4]byte{10, 240, byte(n >> 8), byte(n)}).String()
}

// newNode is the i-th node of spec as a kubelet would register it, with its
// capacity in status; kwok's node-initialize stage keeps the capacity and
// addresses it finds and fills in conditions and node info.
func newNode(spec MemberSpec, i int) *corev1.Node {
	name := NodeName(spec.Name, i)
	labels := map[string]string{
		LabelNodeType:          NodeTypeKwok,
		corev1.LabelHostname:   name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	}
	if spec.Region != "" {
		labels[corev1.LabelTopologyRegion] = spec.Region
	}
	if spec.Zone != "" {
		labels[corev1.LabelTopologyZone] = spec.Zone
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    spec.NodeCPU,
		corev1.ResourceMemory: spec.NodeMemory,
		corev1.ResourcePods:   *resource.NewQuantity(int64(spec.NodePods), resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{kwokNodeAnnotation: kwokNodeAnnotationValue},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: nodeIP(i)},
				{Type: corev1.NodeHostName, Address: name},
			},
		},
	}
}

// ensureNodes creates the spec's nodes that do not exist yet; existing ones
// (a restart) are kept as they are, so changing the node shape of an
// existing member needs a new data dir.
//
// The apiserver's TaintNodesByCondition admission taints every new node
// node.kubernetes.io/not-ready:NoSchedule; in a real cluster the node
// lifecycle controller removes the taint once the kubelet reports Ready.
// Members do not run that controller (its other job, evicting pods from
// nodes whose heartbeats stop, would only misfire when a busy machine
// delays kwok), so the taint is removed here, also from nodes a previous
// run created but did not get to untaint.
func ensureNodes(ctx context.Context, client kubernetes.Interface, spec MemberSpec) error {
	nodes := client.CoreV1().Nodes()
	for i := range spec.Nodes {
		want := newNode(spec, i)
		_, err := nodes.Create(ctx, want, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", want.Name, err)
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := nodes.Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), isNotReadyTaint)
			if len(taints) == len(node.Spec.Taints) {
				return nil
			}
			node.Spec.Taints = taints
			_, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("removing the not-ready taint of node %s: %w", want.Name, err)
		}
	}
	return nil
}

func isNotReadyTaint(t corev1.Taint) bool {
	return t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule
}
