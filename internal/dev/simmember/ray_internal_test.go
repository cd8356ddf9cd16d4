package simmember

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// rayTemplate is a pod template whose one container is named container,
// with a label and an annotation of its own (and a ray.io/group label the
// operator's must win over).
func rayTemplate(container string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{
			"labels":      map[string]any{"team": "ml", rayGroupLabel: "overridden"},
			"annotations": map[string]any{"note": container},
		},
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": container, "image": "rayproject/ray",
			"resources": map[string]any{"requests": map[string]any{"cpu": "1"}},
		}}},
	}
}

// rayGroup is a worker group named name with the given count fields
// (replicas, minReplicas, maxReplicas, numOfHosts; absent when not given).
func rayGroup(name string, fields map[string]int64) map[string]any {
	g := map[string]any{"groupName": name, "template": rayTemplate(name + "-worker")}
	for k, v := range fields {
		g[k] = v
	}
	return g
}

// rayClusterOf is RayCluster ml/train with the head and groups given.
func rayClusterOf(groups ...any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayCluster",
		"metadata": map[string]any{"name": "train", "namespace": "ml", "uid": "uid-train"},
		"spec": map[string]any{
			"headGroupSpec":    map[string]any{"template": rayTemplate("head")},
			"workerGroupSpecs": groups,
		},
	}}
}

// existingPod is a pod of train named name, Running unless phase says
// otherwise, being deleted when deleting.
func existingPod(name string, phase corev1.PodPhase, deleting bool) *corev1.Pod {
	if phase == "" {
		phase = corev1.PodRunning
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-" + name)},
		Status: corev1.PodStatus{Phase: phase}}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{}
	}
	return p
}

func running(names ...string) []*corev1.Pod {
	out := make([]*corev1.Pod, len(names))
	for i, n := range names {
		out[i] = existingPod(n, "", false)
	}
	return out
}

func podNames(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// TestRayPods: what the simulated Ray operator creates and deletes for one
// RayCluster, given the pods it controls.
func TestRayPods(t *testing.T) {
	workers4 := rayGroup("workers", map[string]int64{"replicas": 4})
	all := running("train-head", "train-workers-worker-0", "train-workers-worker-1", "train-workers-worker-2", "train-workers-worker-3")
	for _, tc := range []struct {
		name         string
		rc           *unstructured.Unstructured
		existing     []*corev1.Pod
		create, drop []string
		err          string
	}{
		{
			name: "a new cluster: its head and every worker",
			rc:   rayClusterOf(workers4),
			create: []string{"train-head", "train-workers-worker-0", "train-workers-worker-1",
				"train-workers-worker-2", "train-workers-worker-3"},
		},
		{name: "all there: nothing to do", rc: rayClusterOf(workers4), existing: all},
		{
			name:     "a worker deleted by hand is made again",
			rc:       rayClusterOf(workers4),
			existing: running("train-head", "train-workers-worker-0", "train-workers-worker-1", "train-workers-worker-3"),
			create:   []string{"train-workers-worker-2"},
		},
		{
			name:     "the head deleted by hand is made again",
			rc:       rayClusterOf(workers4),
			existing: all[1:],
			create:   []string{"train-head"},
		},
		{
			name:     "scaled down: the surplus workers go",
			rc:       rayClusterOf(rayGroup("workers", map[string]int64{"replicas": 2})),
			existing: all,
			drop:     []string{"train-workers-worker-2", "train-workers-worker-3"},
		},
		{
			name:     "scaled up: only the new workers are made",
			rc:       rayClusterOf(rayGroup("workers", map[string]int64{"replicas": 6})),
			existing: all,
			create:   []string{"train-workers-worker-4", "train-workers-worker-5"},
		},
		{
			name:     "a group removed: its pods go, a new group's come",
			rc:       rayClusterOf(rayGroup("gpu", map[string]int64{"replicas": 1})),
			existing: all,
			create:   []string{"train-gpu-worker-0"},
			drop:     []string{"train-workers-worker-0", "train-workers-worker-1", "train-workers-worker-2", "train-workers-worker-3"},
		},
		{
			name: "finished pods are deleted to be made again",
			rc:   rayClusterOf(workers4),
			existing: append(running("train-head", "train-workers-worker-0", "train-workers-worker-1"),
				existingPod("train-workers-worker-2", corev1.PodFailed, false), existingPod("train-workers-worker-3", corev1.PodSucceeded, false)),
			drop: []string{"train-workers-worker-2", "train-workers-worker-3"},
		},
		{
			name: "a pod being deleted is waited for, wanted or not",
			rc:   rayClusterOf(rayGroup("workers", map[string]int64{"replicas": 1})),
			existing: append(running("train-workers-worker-0"),
				existingPod("train-head", "", true), existingPod("train-workers-worker-1", "", true)),
		},
		{
			name:   "no worker groups: the head alone",
			rc:     rayClusterOf(),
			create: []string{"train-head"},
		},
		{
			name: "counts: replicas within the bounds, times the hosts",
			rc: rayClusterOf(
				rayGroup("unset", nil),
				rayGroup("above-max", map[string]int64{"replicas": 5, "maxReplicas": 2}),
				rayGroup("below-min", map[string]int64{"replicas": 0, "minReplicas": 1}),
				rayGroup("crossed", map[string]int64{"minReplicas": 3, "maxReplicas": 1}),
				rayGroup("multihost", map[string]int64{"replicas": 2, "numOfHosts": 2}),
			),
			create: []string{"train-above-max-worker-0", "train-above-max-worker-1", "train-below-min-worker-0",
				"train-crossed-worker-0", "train-head", "train-multihost-worker-0", "train-multihost-worker-1",
				"train-multihost-worker-2", "train-multihost-worker-3"},
		},
		{
			name: "a group without a name",
			rc:   rayClusterOf(rayGroup("", map[string]int64{"replicas": 1})),
			err:  "spec.workerGroupSpecs[0].groupName is empty",
		},
		{
			name: "two groups of one name",
			rc:   rayClusterOf(workers4, rayGroup("workers", nil)),
			err:  `spec.workerGroupSpecs[1].groupName "workers" is the name of an earlier group`,
		},
		{
			name: "a template that is not one",
			rc: rayClusterOf(map[string]any{"groupName": "workers", "replicas": int64(1),
				"template": map[string]any{"spec": "big"}}),
			err: "spec",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			create, drop, err := rayPods(tc.rc, tc.existing)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := podNames(create); !reflect.DeepEqual(got, append([]string{}, tc.create...)) {
				t.Errorf("creates %v, want %v", got, tc.create)
			}
			if got := podNames(drop); !reflect.DeepEqual(got, append([]string{}, tc.drop...)) {
				t.Errorf("deletes %v, want %v", got, tc.drop)
			}
			for _, p := range create {
				checkRayPod(t, p)
			}
		})
	}
}

// checkRayPod holds a pod to be made for train to KubeRay's labels, the
// template's labels and annotations, the template's spec, and train as its
// controller.
func checkRayPod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	nodeType, group, container := "head", "headgroup", "head"
	if !strings.HasSuffix(p.Name, "-head") {
		group = strings.TrimPrefix(p.Name[:strings.LastIndex(p.Name, "-worker-")], "train-")
		nodeType, container = "worker", group+"-worker"
	}
	wantLabels := map[string]string{"team": "ml", "ray.io/cluster": "train", "ray.io/node-type": nodeType, "ray.io/group": group}
	if !reflect.DeepEqual(p.Labels, wantLabels) {
		t.Errorf("%s: labels %v, want %v", p.Name, p.Labels, wantLabels)
	}
	if p.Annotations["note"] != container {
		t.Errorf("%s: annotations %v, want the template's", p.Name, p.Annotations)
	}
	if p.Namespace != "ml" || len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Name != container ||
		p.Spec.Containers[0].Resources.Requests.Cpu().String() != "1" {
		t.Errorf("%s: namespace %q, spec %+v, want ml and the template's spec", p.Name, p.Namespace, p.Spec)
	}
	yes := true
	wantOwner := []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "train", UID: "uid-train",
		Controller: &yes, BlockOwnerDeletion: &yes}}
	if !reflect.DeepEqual(p.OwnerReferences, wantOwner) {
		t.Errorf("%s: owners %+v, want %+v", p.Name, p.OwnerReferences, wantOwner)
	}
}

// TestRayClusterCRD: the embedded CRD decodes, serves ray.io/v1
// RayClusters with a status subresource and names what the operator reads.
func TestRayClusterCRD(t *testing.T) {
	crd := RayClusterCRD()
	if crd.Name != "rayclusters.ray.io" || crd.Spec.Names.Kind != "RayCluster" || len(crd.Spec.Versions) != 1 {
		t.Fatalf("CRD %s of %s, %d versions", crd.Name, crd.Spec.Names.Kind, len(crd.Spec.Versions))
	}
	v := crd.Spec.Versions[0]
	if v.Name != rayClusterGVR.Version || !v.Served || !v.Storage || v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("version %+v: want v1 served and stored, with status", v)
	}
	groups := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["workerGroupSpecs"].Items.Schema
	for _, f := range []string{"groupName", "replicas", "minReplicas", "maxReplicas", "numOfHosts", "template"} {
		if _, ok := groups.Properties[f]; !ok {
			t.Errorf("the worker group schema does not name %s", f)
		}
	}
	if RayClusterCRD() == crd {
		t.Error("RayClusterCRD returned the same copy twice")
	}
}
