package fleetbench

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestSimulatedManifestStatus(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		wantID   workv1alpha1.ResourceIdentifier
		wantRepl int32
		noStatus bool
	}{
		{"a Deployment is ready in full", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"bench"},"spec":{"replicas":3}}`,
			workv1alpha1.ResourceIdentifier{Ordinal: 2, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "bench", Name: "web"}, 3, false},
		{"a core object has no group and no replicas", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"bench"}}`,
			workv1alpha1.ResourceIdentifier{Ordinal: 2, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "bench", Name: "cfg"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := simulatedManifestStatus(2, []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if ms.Identifier != tt.wantID || ms.Health != policyv1alpha1.ResourceHealthy {
				t.Fatalf("got %+v", ms)
			}
			if tt.noStatus {
				if ms.Status != nil {
					t.Errorf("status %s for an object without replicas", ms.Status.Raw)
				}
				return
			}
			var st struct{ ReadyReplicas, AvailableReplicas int32 }
			if err := json.Unmarshal(ms.Status.Raw, &st); err != nil {
				t.Fatal(err)
			}
			if st.ReadyReplicas != tt.wantRepl || st.AvailableReplicas != tt.wantRepl {
				t.Errorf("status %s, want %d ready and available", ms.Status.Raw, tt.wantRepl)
			}
		})
	}
	if _, err := simulatedManifestStatus(0, []byte("{not json")); err == nil {
		t.Error("a manifest that is not JSON was accepted")
	}
}

func TestNeedsAck(t *testing.T) {
	now := metav1.Now()
	work := func(ns string, gen, acked int64, deleting bool, finalizer bool) *workv1alpha1.Work {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Generation: gen}}
		if acked > 0 {
			w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue, ObservedGeneration: acked}}
		}
		if deleting {
			w.DeletionTimestamp = &now
		}
		if finalizer {
			w.Finalizers = []string{workv1alpha1.FinalizerWork}
		}
		return w
	}
	tests := []struct {
		name string
		w    *workv1alpha1.Work
		want bool
	}{
		{"new Work of a simulated cluster", work("shepherd-es-sim-0001", 1, 0, false, true), true},
		{"acknowledged", work("shepherd-es-sim-0001", 1, 1, false, true), false},
		{"spec changed since", work("shepherd-es-sim-0001", 2, 1, false, true), true},
		{"deleted, finalizer still on", work("shepherd-es-sim-0001", 1, 1, true, true), true},
		{"deleted, released", work("shepherd-es-sim-0001", 1, 1, true, false), false},
		{"another cluster's Work", work("shepherd-es-member1", 1, 0, false, true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := needsAck(tt.w); got != tt.want {
				t.Errorf("needsAck = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCountNoOp(t *testing.T) {
	base := func() *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ResourceVersion: "1",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "a"}}}}
	}
	rvOnly := base()
	rvOnly.ResourceVersion, rvOnly.ManagedFields = "2", []metav1.ManagedFieldsEntry{{Manager: "b"}}
	changed := base()
	changed.ResourceVersion = "3"
	changed.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue}}
	sameRV := base()
	rb := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "1"}}
	rb2 := rb.DeepCopy()
	rb2.ResourceVersion = "2"

	p := &progress{noOps: map[string]int{}}
	p.countNoOp(base(), rvOnly)  // a write that changed nothing
	p.countNoOp(base(), changed) // a real change
	p.countNoOp(base(), sameRV)  // a resync, not a write
	p.countNoOp(rb, rb2)
	if got := p.noOpWrites(); got["Work"] != 1 || got["ResourceBinding"] != 1 || len(got) != 2 {
		t.Errorf("no-op writes %v, want one Work and one ResourceBinding", got)
	}
}

// TestSimulatedClusterRoom: a simulated cluster has room for the replicas
// a run asks for (Shepherd places by room: without it, the karmada-startup
// scenario left every workload past the 2,200th Unschedulable), and at
// least the default room. The room is counted the way the scheduler sums
// it: the least of CPU, memory and pods over one benchmark replica's
// request.
func TestSimulatedClusterRoom(t *testing.T) {
	one := deployment("ns", 0, 0, 1).Spec.Template.Spec.Containers[0].Resources.Requests
	for _, tc := range []struct {
		replicas int
		want     int64
	}{
		{0, simRoomReplicas},
		{simRoomReplicas - 1, simRoomReplicas},
		{30_000, 30_000},
		{200_000, 200_000},
	} {
		t.Run(fmt.Sprint(tc.replicas), func(t *testing.T) {
			alloc := simulatedClusterStatus(1, tc.replicas).ResourceSummary.Allocatable
			cpu, mem, pods := alloc[corev1.ResourceCPU], alloc[corev1.ResourceMemory], alloc[corev1.ResourcePods]
			fits := min(cpu.MilliValue()/one.Cpu().MilliValue(), mem.Value()/one.Memory().Value(), pods.Value())
			if fits < tc.want {
				t.Errorf("room for %d replicas (cpu %s, memory %s, pods %s), want %d", fits, cpu.String(), mem.String(), pods.String(), tc.want)
			}
			if pods.Value() != tc.want {
				t.Errorf("pods %d, want %d", pods.Value(), tc.want)
			}
		})
	}
}
