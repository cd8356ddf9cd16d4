package hubbench

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// floorCRD is the cheapest custom resource a hub stores: a spec and a
// status of any shape, with a status subresource and nothing to validate.
func floorCRD() *apiextensionsv1.CustomResourceDefinition {
	anything := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "floors.bench.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "bench.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Floor", ListKind: "FloorList", Plural: "floors", Singular: "floor"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": anything, "status": anything,
					},
				}},
			}},
		},
	}
}

// floor is a Floor of about 500 bytes of spec.
func floor(ns string, i int) *unstructured.Unstructured {
	return floorNamed(ns, fmt.Sprintf("floor-%05d", i))
}

// appliedFloor is a floor created by server-side apply.
func appliedFloor(ns string, i int) *unstructured.Unstructured {
	return floorNamed(ns, fmt.Sprintf("applied-%05d", i))
}

func floorNamed(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.example.com/v1", "kind": "Floor",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"payload": strings.Repeat("x", 480), "generation": int64(1)},
	}}
	return u
}

// binding is a ResourceBinding as the detector creates it for a Deployment
// of 2 replicas divided over two of twenty clusters.
func binding(ns string, i int) *unstructured.Unstructured {
	name := fmt.Sprintf("app-%05d", i)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.shepherd.io/v1alpha1", "kind": "ResourceBinding",
		"metadata": map[string]any{
			"namespace": ns, "name": name + "-deployment",
			"labels": map[string]any{"policy.shepherd.io/kind": "PropagationPolicy", "policy.shepherd.io/namespace": ns,
				"policy.shepherd.io/name": "bench"},
			"annotations": map[string]any{"work.shepherd.io/template-generation": "1"},
			"finalizers":  []any{"work.shepherd.io/binding"},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
				"uid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i), "controller": true}},
		},
		"spec": map[string]any{
			"resource": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": ns, "name": name,
				"uid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i), "resourceVersion": "1"},
			"policyRef":           map[string]any{"kind": "PropagationPolicy", "namespace": ns, "name": "bench"},
			"replicas":            int64(2),
			"replicaRequirements": map[string]any{"resourceRequest": map[string]any{"cpu": "100m", "memory": "64Mi"}},
			"placement": map[string]any{
				"clusterAffinity": map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"env": "bench"}}},
				"replicaScheduling": map[string]any{"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
					"weightPreference": map[string]any{"dynamicWeight": "AvailableReplicas"}},
				"spreadConstraints": []any{map[string]any{"spreadByField": "cluster", "minGroups": int64(2), "maxGroups": int64(2)}},
			},
		},
	}}
}

// schedulePatch is the scheduler's spec patch: the targets and the hash.
func schedulePatch() []byte {
	return []byte(`{"metadata":{"annotations":{"work.shepherd.io/scheduled-hash":"3f1c2a9b"}},` +
		`"spec":{"clusters":[{"name":"member-03","replicas":1},{"name":"member-11","replicas":1}]}}`)
}

// scheduleStatusPatch is the scheduler's status patch: the condition, the
// time and the decisions of the 20 clusters, as many as the scheduler keeps.
func scheduleStatusPatch() []byte {
	var b strings.Builder
	b.WriteString(`{"status":{"lastScheduledTime":"2026-01-01T00:00:00Z","conditions":[{"type":"Scheduled","status":"True",` +
		`"reason":"Success","message":"Binding has been scheduled successfully.","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":2}],` +
		`"schedulingDecisions":[`)
	for c := range min(20, workv1alpha1.MaxSchedulingDecisions) {
		if c > 0 {
			b.WriteString(",")
		}
		selected := c == 3 || c == 11
		reason := "lower score than the 2 selected clusters"
		if selected {
			reason = "selected"
		}
		fmt.Fprintf(&b, `{"clusterName":"member-%02d","selected":%t,"totalScore":%d,"reason":"%s","scores":[{"plugin":"Locality","score":0},{"plugin":"Capacity","score":%d}]}`,
			c, selected, 100-c, reason, 100-c)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// work is a Work as the binding controller writes it: a Deployment's
// manifest and the binding's labels and annotations.
func work(ns string, i int) *unstructured.Unstructured {
	name := fmt.Sprintf("app-%05d", i)
	manifest := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "default", "name": name, "labels": map[string]any{"app": name}},
		"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}}}}}}},
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.shepherd.io/v1alpha1", "kind": "Work",
		"metadata": map[string]any{
			"namespace": ns, "name": "default-" + name + "-deployment",
			"labels": map[string]any{"work.shepherd.io/binding-kind": "ResourceBinding", "work.shepherd.io/binding-namespace": "default",
				"work.shepherd.io/binding-name": name + "-deployment", "work.shepherd.io/cluster": "member-03"},
			"annotations": map[string]any{"work.shepherd.io/binding": "ResourceBinding/default/" + name + "-deployment",
				"work.shepherd.io/template-generation": "1"},
			"finalizers": []any{"work.shepherd.io/execution"},
		},
		"spec": map[string]any{"workload": map[string]any{"manifests": []any{manifest}}},
	}}
}

// workStatusPatch is the execution controller's status patch.
func workStatusPatch() []byte {
	return []byte(`{"status":{"conditions":[{"type":"Applied","status":"True","reason":"AppliedSuccessful","message":"Manifest has been successfully applied",` +
		`"lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}],"manifestStatuses":[{"identifier":{"ordinal":0,"group":"apps",` +
		`"version":"v1","kind":"Deployment","resource":"deployments","namespace":"default","name":"app"},"health":"Healthy","generation":1,` +
		`"status":{"replicas":1,"readyReplicas":1,"availableReplicas":1,"updatedReplicas":1,"observedGeneration":1}}]}}`)
}

// schemalessBinding is binding's content (the same metadata, spec and,
// once patched, status) stored as a Floor: a custom resource with no schema
// to coerce or validate. Against the real binding it says what the
// binding's schema costs, apart from its size.
func schemalessBinding(ns string, i int) *unstructured.Unstructured {
	u := binding(ns, i)
	u.SetAPIVersion("bench.example.com/v1")
	u.SetKind("Floor")
	u.SetName(fmt.Sprintf("binding-%05d", i))
	u.SetOwnerReferences(nil)
	u.SetFinalizers(nil)
	return u
}

// slimBindingCRD is the ResourceBinding CRD under the bench group as kind,
// with the copies of the policy's placement and failover (which only
// controllers write, from a policy the API server validated) stored
// without a schema, and with noStatusSchema the status too: against the
// real binding it says what those schemas cost.
func slimBindingCRD(real *apiextensionsv1.CustomResourceDefinition, kind string, noStatusSchema bool) *apiextensionsv1.CustomResourceDefinition {
	c := real.DeepCopy()
	plural := strings.ToLower(kind) + "s"
	c.Name = plural + ".bench.example.com"
	c.Spec.Group = "bench.example.com"
	c.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)}
	anything := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	for i := range c.Spec.Versions {
		v := &c.Spec.Versions[i]
		v.Name = "v1"
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		for _, f := range []string{"placement", "failover"} {
			if _, ok := spec.Properties[f]; ok {
				spec.Properties[f] = anything
			}
		}
		v.Schema.OpenAPIV3Schema.Properties["spec"] = spec
		if noStatusSchema {
			v.Schema.OpenAPIV3Schema.Properties["status"] = anything
		}
	}
	return c
}

// slimBinding returns binding as the given kind of the bench group.
func slimBinding(kind string) func(ns string, i int) *unstructured.Unstructured {
	return func(ns string, i int) *unstructured.Unstructured {
		u := binding(ns, i)
		u.SetAPIVersion("bench.example.com/v1")
		u.SetKind(kind)
		u.SetOwnerReferences(nil)
		return u
	}
}
