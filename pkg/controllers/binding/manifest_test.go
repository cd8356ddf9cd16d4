package binding

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
)

func parse(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

const hubDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: team
  uid: 0a1b
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  finalizers: [hub.example/x]
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: u}]
  managedFields: [{manager: kubectl}]
  labels: {app: web}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
spec:
  replicas: 6
  template:
    spec:
      containers: [{name: web, image: nginx:1.27}]
status:
  replicas: 6
`

func TestMemberManifest(t *testing.T) {
	tmpl := parse(t, hubDeployment)
	orig := tmpl.DeepCopy()
	m := memberManifest(interpreter.New(), tmpl)
	if !equalObjects(tmpl, orig) {
		t.Fatal("Manifest modified the template")
	}
	for _, f := range append([]string{"status"}, hubMetadata...) {
		path := []string{"metadata", f}
		if f == "status" {
			path = []string{"status"}
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(m.Object, path...); found {
			t.Errorf("manifest keeps %v", path)
		}
	}
	if m.GetAnnotations() != nil {
		t.Errorf("manifest keeps annotations %v", m.GetAnnotations())
	}
	if m.GetLabels()["app"] != "web" || m.GetName() != "web" || m.GetNamespace() != "team" {
		t.Errorf("manifest lost identity or labels: %v", m.Object["metadata"])
	}
	cs, _, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 || cs[0].(map[string]any)["image"] != "nginx:1.27" {
		t.Errorf("containers = %v", cs)
	}
}

func TestMemberManifestPrunesHubAllocations(t *testing.T) {
	tests := []struct {
		name, doc string
		gone      [][]string
		kept      [][]string
	}{{
		name: "job with generated selector",
		doc: `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {selector: {matchLabels: {batch.kubernetes.io/controller-uid: u}},
               template: {metadata: {labels: {batch.kubernetes.io/controller-uid: u, controller-uid: u, job-name: j, batch.kubernetes.io/job-name: j, app: x}}}}}`,
		gone: [][]string{{"spec", "selector"}, {"spec", "template", "metadata", "labels", "controller-uid"}, {"spec", "template", "metadata", "labels", "batch.kubernetes.io/controller-uid"}},
		kept: [][]string{{"spec", "template", "metadata", "labels", "app"}},
	}, {
		name: "job with manual selector",
		doc:  `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {manualSelector: true, selector: {matchLabels: {app: x}}}}`,
		kept: [][]string{{"spec", "selector"}},
	}, {
		name: "service",
		doc:  `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {clusterIP: 10.0.0.7, clusterIPs: [10.0.0.7], ports: [{port: 80}]}}`,
		gone: [][]string{{"spec", "clusterIP"}, {"spec", "clusterIPs"}},
		kept: [][]string{{"spec", "ports"}},
	}, {
		name: "headless service",
		doc:  `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {clusterIP: None}}`,
		kept: [][]string{{"spec", "clusterIP"}},
	}}
	for _, tt := range tests {
		m := memberManifest(interpreter.New(), parse(t, tt.doc))
		for _, p := range tt.gone {
			if _, found, _ := unstructured.NestedFieldNoCopy(m.Object, p...); found {
				t.Errorf("%s: manifest keeps %v", tt.name, p)
			}
		}
		for _, p := range tt.kept {
			if _, found, _ := unstructured.NestedFieldNoCopy(m.Object, p...); !found {
				t.Errorf("%s: manifest lost %v", tt.name, p)
			}
		}
	}
}

func TestMemberManifests(t *testing.T) {
	targets := []workv1alpha1.TargetCluster{
		{Name: "a", Replicas: 2, State: workv1alpha1.TargetBound},
		{Name: "b", Replicas: 4},
		{Name: "gone", Replicas: 3, State: workv1alpha1.TargetUnscheduled},
	}
	divided := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	tests := []struct {
		name      string
		placement *policyv1alpha1.Placement
		want      map[string]int64
	}{
		{name: "divided", placement: divided, want: map[string]int64{"a": 2, "b": 4}},
		{name: "duplicated keeps the template's replicas", want: map[string]int64{"a": 6, "b": 6}},
	}
	for _, tt := range tests {
		ms, err := memberManifests(interpreter.New(), parse(t, hubDeployment), &workv1alpha1.BindingSpec{Replicas: 6, Placement: tt.placement, Clusters: targets})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != len(tt.want) {
			t.Errorf("%s: manifests for %d clusters, want %d (unscheduled targets get none)", tt.name, len(ms), len(tt.want))
		}
		for cluster, want := range tt.want {
			if got, _, _ := unstructured.NestedInt64(ms[cluster].Object, "spec", "replicas"); got != want {
				t.Errorf("%s: %s has %d replicas, want %d", tt.name, cluster, got, want)
			}
		}
	}
}

const hubWorkerPool = `
apiVersion: example.io/v1
kind: WorkerPool
metadata: {name: pool, namespace: team, uid: 0c1d, resourceVersion: "7"}
spec:
  head: {replicas: 1, cpu: "8"}
  workerGroups:
  - {name: cpu, replicas: 9}
  - {name: gpu, replicas: 2}
`

// The copy of each cluster of a workload whose components were divided
// runs that cluster's share of each component, written at its
// replicasPath, and 0 of the components it does not run; a cluster
// leaving gets no copy; the same workload placed whole is sent as it is.
func TestMemberManifestsOfDividedComponents(t *testing.T) {
	components := []workv1alpha1.Component{
		{Name: "head", Replicas: 1, ReplicasPath: "/spec/head/replicas"},
		{Name: "cpu", Replicas: 9, Divisible: true, ReplicasPath: "/spec/workerGroups/0/replicas"},
		{Name: "gpu", Replicas: 2, Divisible: true, ReplicasPath: "/spec/workerGroups/1/replicas"},
	}
	tc := func(name string, state workv1alpha1.TargetState, cs ...workv1alpha1.TargetComponent) workv1alpha1.TargetCluster {
		return workv1alpha1.TargetCluster{Name: name, State: state, Components: cs}
	}
	targets := []workv1alpha1.TargetCluster{
		tc("m1", workv1alpha1.TargetBound, workv1alpha1.TargetComponent{Name: "cpu", Replicas: 4}),
		tc("m2", workv1alpha1.TargetScheduled, workv1alpha1.TargetComponent{Name: "head", Replicas: 1}, workv1alpha1.TargetComponent{Name: "gpu", Replicas: 2}),
		tc("m3", "", workv1alpha1.TargetComponent{Name: "cpu", Replicas: 5}),
		tc("old", workv1alpha1.TargetUnscheduled, workv1alpha1.TargetComponent{Name: "cpu", Replicas: 9}),
	}
	read := func(m *unstructured.Unstructured) [3]int64 {
		head, _, _ := unstructured.NestedInt64(m.Object, "spec", "head", "replicas")
		groups, _, _ := unstructured.NestedSlice(m.Object, "spec", "workerGroups")
		return [3]int64{head, groups[0].(map[string]any)["replicas"].(int64), groups[1].(map[string]any)["replicas"].(int64)}
	}
	divide := &policyv1alpha1.Placement{Components: &policyv1alpha1.ComponentsPlacement{Division: policyv1alpha1.ComponentDivisionDivideIndependent}}
	for _, tt := range []struct {
		name     string
		division *workv1alpha1.DividedComponents
		want     map[string][3]int64
	}{
		{"divided", &workv1alpha1.DividedComponents{HeadCluster: "m2"}, map[string][3]int64{"m1": {0, 4, 0}, "m2": {1, 0, 2}, "m3": {0, 5, 0}}},
		{"placed whole", nil, map[string][3]int64{"m1": {1, 9, 2}, "m2": {1, 9, 2}, "m3": {1, 9, 2}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := parse(t, hubWorkerPool)
			spec := &workv1alpha1.BindingSpec{Placement: divide, Components: components, Clusters: targets, DividedComponents: tt.division}
			ms, err := memberManifests(interpreter.New(), tmpl, spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != len(tt.want) {
				t.Errorf("copies for %d clusters, want %d", len(ms), len(tt.want))
			}
			for cluster, want := range tt.want {
				if got := read(ms[cluster]); got != want {
					t.Errorf("%s: head, cpu, gpu = %v, want %v", cluster, got, want)
				}
				if ms[cluster].GetUID() != "" {
					t.Errorf("%s: the copy keeps the hub's metadata", cluster)
				}
			}
			if got := read(tmpl); got != [3]int64{1, 9, 2} {
				t.Errorf("the template changed: %v", got)
			}
		})
	}
	// A template whose pointer no longer names its field (a group
	// removed before the rule was read again) is an error naming it.
	tmpl := parse(t, strings.Replace(hubWorkerPool, "  - {name: gpu, replicas: 2}\n", "", 1))
	spec := &workv1alpha1.BindingSpec{Components: components, Clusters: targets, DividedComponents: &workv1alpha1.DividedComponents{HeadCluster: "m2"}}
	if _, err := memberManifests(interpreter.New(), tmpl, spec); err == nil || !strings.Contains(err.Error(), `component "gpu": replicasPath "/spec/workerGroups/1/replicas" names nothing in the template`) {
		t.Errorf("got %v, want an error naming the component and its pointer", err)
	}
}

func TestDesiredWorkAndUpToDate(t *testing.T) {
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: "team", Name: "web-deployment"}
	manifest := memberManifest(interpreter.New(), parse(t, hubDeployment))
	desired := desiredWork(ref, "c1", manifest, 1, &workv1alpha1.BindingSpec{})
	if desired.GetNamespace() != "shepherd-es-c1" || desired.GetName() != "team.web-deployment" {
		t.Errorf("Work %s/%s", desired.GetNamespace(), desired.GetName())
	}
	if desired.GetLabels()[workv1alpha1.LabelCluster] != "c1" || desired.GetAnnotations()[workv1alpha1.AnnotationBinding] != ref.String() {
		t.Errorf("Work metadata %v %v", desired.GetLabels(), desired.GetAnnotations())
	}

	// What the API server stores and the cache returns: the typed Work,
	// plus fields of other owners.
	stored := &workv1alpha1.Work{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(desired.Object, stored); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(manifest.Object)
	stored.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	stored.Finalizers = []string{workv1alpha1.FinalizerWork}
	stored.Labels["extra"] = "x"
	if !upToDate(stored, desired) {
		t.Fatal("an identical Work is not up to date")
	}
	changed := manifest.DeepCopy()
	_ = unstructured.SetNestedField(changed.Object, int64(3), "spec", "replicas")
	if upToDate(stored, desiredWork(ref, "c1", changed, 1, &workv1alpha1.BindingSpec{})) {
		t.Fatal("a Work with other replicas is up to date")
	}
	delete(stored.Labels, workv1alpha1.LabelBindingName)
	if upToDate(stored, desired) {
		t.Fatal("a Work missing a label is up to date")
	}
}

func equalObjects(a, b *unstructured.Unstructured) bool {
	x, _ := json.Marshal(a.Object)
	y, _ := json.Marshal(b.Object)
	return string(x) == string(y)
}

// TestPreservedStateLabels: the labels of the latest eviction that
// preserved state go to the one cluster the workload runs on after the
// failover, unless it ran there before; nowhere when it runs on several.
func TestPreservedStateLabels(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	history := []workv1alpha1.EvictionHistoryEntry{
		{ClusterName: "old", EvictedAt: t0, PreservedLabelState: map[string]string{"ckpt": "1"}, ClustersBeforeFailover: []string{"old"}},
		{ClusterName: "a", EvictedAt: metav1.NewTime(t0.Add(time.Minute)), PreservedLabelState: map[string]string{"ckpt": "2"}, ClustersBeforeFailover: []string{"a"}},
		{ClusterName: "x", EvictedAt: metav1.NewTime(t0.Add(2 * time.Minute))}, // no state: not the one used
	}
	duplicated := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}}
	tests := []struct {
		name    string
		targets []workv1alpha1.TargetCluster
		want    map[string]string // cluster -> ckpt label ("" for none)
	}{
		{name: "one new cluster gets the latest state", targets: []workv1alpha1.TargetCluster{{Name: "b", Replicas: 6}}, want: map[string]string{"b": "2"}},
		{name: "the cluster it ran on before gets nothing", targets: []workv1alpha1.TargetCluster{{Name: "a", Replicas: 6}}, want: map[string]string{"a": ""}},
		{name: "several clusters get nothing", targets: []workv1alpha1.TargetCluster{{Name: "b", Replicas: 3}, {Name: "c", Replicas: 3}}, want: map[string]string{"b": "", "c": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &workv1alpha1.BindingSpec{Replicas: 6, Placement: duplicated, Clusters: tt.targets, EvictionHistory: history}
			ms, err := memberManifests(interpreter.New(), parse(t, hubDeployment), spec)
			if err != nil {
				t.Fatal(err)
			}
			for cluster, want := range tt.want {
				if got := ms[cluster].GetLabels()["ckpt"]; got != want {
					t.Errorf("%s: label ckpt = %q, want %q", cluster, got, want)
				}
			}
		})
	}
	// The template itself is never modified.
	tmpl := parse(t, hubDeployment)
	if _, err := memberManifests(interpreter.New(), tmpl, &workv1alpha1.BindingSpec{Placement: duplicated, Clusters: []workv1alpha1.TargetCluster{{Name: "b"}}, EvictionHistory: history}); err != nil {
		t.Fatal(err)
	}
	if _, ok := tmpl.GetLabels()["ckpt"]; ok {
		t.Error("the template was modified")
	}
}

// TestCheckIdentity: a rendered manifest is written into a Work only while
// it is the binding's resource; a tenant's ConfigMap turned into a
// ClusterRoleBinding or a Namespace, or moved to another namespace, is
// refused, naming the field.
func TestCheckIdentity(t *testing.T) {
	res := workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "team-a", Name: "cfg"}
	cases := []struct {
		name     string
		manifest string
		err      string
	}{
		{"the template itself", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: team-a}", ""},
		{"turned into a ClusterRoleBinding", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: cfg, namespace: team-a}",
			`manifest's group is "rbac.authorization.k8s.io", not the template's ""`},
		{"turned into a Namespace", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}",
			`manifest's kind is "Namespace", not the template's "ConfigMap"`},
		{"moved to another namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: team-b}",
			`manifest's namespace is "team-b", not the template's "team-a"`},
		{"without a namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}",
			`manifest's namespace is "", not the template's "team-a"`},
		{"renamed", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: team-a}",
			`manifest's name is "other", not the template's "cfg"`},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			err := checkIdentity(parse(t, tt.manifest), res)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("want an error containing %q, got %v", tt.err, err)
			}
		})
	}
	// Another version of the same group and kind names the same object.
	if err := checkIdentity(parse(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: team}"),
		workv1alpha1.ObjectReference{APIVersion: "apps/v1beta2", Kind: "Deployment", Namespace: "team", Name: "web"}); err != nil {
		t.Fatalf("another version: %v", err)
	}
	if err := checkIdentity(parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: team-a}"),
		workv1alpha1.ObjectReference{APIVersion: "a/b/c", Kind: "ConfigMap", Namespace: "team-a", Name: "cfg"}); err == nil {
		t.Fatal("a bad apiVersion in the binding: want an error")
	}
}
