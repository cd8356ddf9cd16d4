package overrides

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

func plaintext(ops ...policyv1alpha1.PlaintextOverrider) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{Plaintext: ops}
}

func pt(op policyv1alpha1.OverriderOperator, path string, v ...string) policyv1alpha1.PlaintextOverrider {
	p := policyv1alpha1.PlaintextOverrider{Operator: op, Path: path}
	if len(v) > 0 {
		p.Value = js(v[0])
	}
	return p
}

func TestPlaintextOverrider(t *testing.T) {
	add, remove, replace := policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace
	runOverriders(t, []overriderCase{
		{name: "replace a number", obj: deploymentYAML, o: plaintext(pt(replace, "/spec/replicas", "5")),
			want: map[string]string{"/spec/replicas": "5"}},
		{name: "ops apply in order", obj: deploymentYAML, o: plaintext(
			pt(add, "/metadata/labels/tier", `"edge"`),
			pt(remove, "/spec/template/spec/containers/1"),
			pt(add, "/spec/template/spec/containers/0/env", `[{"name":"A","value":"1"}]`),
			pt(replace, "/metadata/labels/tier", `"core"`)),
			want: map[string]string{"/metadata/labels": "{app: web, tier: core}", "/spec/template/spec/containers/1": absent,
				"/spec/template/spec/containers/0/env": "[{name: A, value: '1'}]"}},
		{name: "add to the end of a list", obj: deploymentYAML, o: plaintext(pt(add, "/spec/template/spec/containers/0/args/-", `"--x"`)),
			want: map[string]string{"/spec/template/spec/containers/0/args": "[--debug, --port=80, --x]"}},
		{name: "escaped keys", obj: deploymentYAML, o: plaintext(pt(add, "/metadata/labels/example.com~1tier", `"edge"`)),
			want: map[string]string{"/metadata/labels/example.com~1tier": "edge"}},
		{name: "replace a missing path", obj: deploymentYAML, o: plaintext(pt(replace, "/spec/replicas", "1"), pt(replace, "/spec/replicaz", "1")),
			err: "OverridePolicy default/p rule 0 plaintext[1]: replace /spec/replicaz: path not found"},
		{name: "remove a missing path", obj: deploymentYAML, o: plaintext(pt(remove, "/spec/nope")),
			err: "plaintext[0]: remove /spec/nope: path not found"},
		{name: "add under a missing parent", obj: deploymentYAML, o: plaintext(pt(add, "/spec/strategy/type", `"Recreate"`)),
			err: "plaintext[0]: add /spec/strategy/type: path not found"},
		{name: "index out of range", obj: deploymentYAML, o: plaintext(pt(add, "/spec/template/spec/containers/9", "{}")),
			err: "plaintext[0]: add /spec/template/spec/containers/9: "},
		{name: "path without a slash", obj: deploymentYAML, o: plaintext(pt(replace, "spec/replicas", "1")),
			err: `plaintext[0]: replace spec/replicas: "spec/replicas" is not a JSON pointer: it must start with /`},
		{name: "bad escape", obj: deploymentYAML, o: plaintext(pt(remove, "/metadata/labels/a~2")),
			err: `"a~2" escapes badly (~0 is ~, ~1 is /)`},
		{name: "add without a value", obj: deploymentYAML, o: plaintext(pt(add, "/spec/paused")),
			err: "plaintext[0]: add /spec/paused needs a value"},
		{name: "null is a value", obj: deploymentYAML, o: plaintext(pt(add, "/spec/paused", "null")),
			want: map[string]string{"/spec/paused": "null"}},
		{name: "remove with a value", obj: deploymentYAML, o: plaintext(pt(remove, "/spec/replicas", "1")),
			err: "plaintext[0]: remove /spec/replicas takes no value"},
		{name: "unknown operator", obj: deploymentYAML, o: plaintext(pt("move", "/spec/replicas", "1")),
			err: `plaintext[0]: operator "move"`},
		{name: "the name", obj: deploymentYAML, o: plaintext(pt(replace, "/metadata/name", `"x"`)),
			err: "plaintext[0]: replace /metadata/name: Shepherd keeps what the object is and which object it is"},
		{name: "the namespace", obj: deploymentYAML, o: plaintext(pt(remove, "/metadata/namespace")),
			err: "plaintext[0]: remove /metadata/namespace: Shepherd keeps"},
		{name: "owner references", obj: deploymentYAML, o: plaintext(pt(add, "/metadata/ownerReferences/0", "{}")),
			err: "plaintext[0]: add /metadata/ownerReferences/0: Shepherd keeps"},
		{name: "the whole metadata", obj: deploymentYAML, o: plaintext(pt(replace, "/metadata", `{"name":"web"}`)),
			err: "plaintext[0]: replace /metadata: Shepherd keeps"},
		{name: "the kind removed", obj: deploymentYAML, o: plaintext(pt(remove, "/kind")),
			err: "plaintext[0]: remove /kind: Shepherd keeps what the object is"},
		// A tenant's ConfigMap turned into a ClusterRoleBinding or a
		// Namespace: every identity path is refused, whatever the operator.
		{name: "the kind replaced", obj: deploymentYAML, o: plaintext(pt(replace, "/kind", `"ClusterRoleBinding"`)),
			err: "plaintext[0]: replace /kind: Shepherd keeps"},
		{name: "the apiVersion replaced", obj: deploymentYAML, o: plaintext(pt(replace, "/apiVersion", `"rbac.authorization.k8s.io/v1"`)),
			err: "plaintext[0]: replace /apiVersion: Shepherd keeps"},
		{name: "below the kind", obj: deploymentYAML, o: plaintext(pt(add, "/kind/x", `"y"`)),
			err: "plaintext[0]: add /kind/x: Shepherd keeps"},
		{name: "generateName", obj: deploymentYAML, o: plaintext(pt(add, "/metadata/generateName", `"x-"`)),
			err: "plaintext[0]: add /metadata/generateName: Shepherd keeps"},
		{name: "finalizers", obj: deploymentYAML, o: plaintext(pt(add, "/metadata/finalizers", `["example.com/hold"]`)),
			err: "plaintext[0]: add /metadata/finalizers: Shepherd keeps"},
		{name: "a finalizer", obj: deploymentYAML, o: plaintext(pt(add, "/metadata/finalizers/0", `"example.com/hold"`)),
			err: "plaintext[0]: add /metadata/finalizers/0: Shepherd keeps"},
		{name: "a label is not identity", obj: deploymentYAML, o: plaintext(pt(add, "/metadata/labels/kind", `"x"`)),
			want: map[string]string{"/metadata/labels/kind": `"x"`}},
		{name: "the apiVersion through an image predicate", obj: deploymentYAML, o: imageAt("/apiVersion", policyv1alpha1.Tag, replace, "v2"),
			err: "imageOverrider[0]: changes apiVersion, which Shepherd keeps"},
		{name: "identity kept whatever the overrider", obj: deploymentYAML, o: imageAt("/metadata/name", policyv1alpha1.Repository, replace, "api"),
			err: "imageOverrider[0]: changes metadata.name, which Shepherd keeps"},
		{name: "the namespace through an image predicate", obj: deploymentYAML, o: imageAt("/metadata/namespace", policyv1alpha1.Repository, replace, "team-b"),
			err: "imageOverrider[0]: changes metadata.namespace, which Shepherd keeps"},
		{name: "the uid", obj: deploymentYAML, o: imageAt("/metadata/resourceVersion", policyv1alpha1.Tag, add, "8"),
			err: "imageOverrider[0]: changes metadata.resourceVersion"},
	})
}

func field(path string, json []policyv1alpha1.JSONPatchOperation, yaml []policyv1alpha1.YAMLPatchOperation) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: path, JSON: json, YAML: yaml}}}
}

func jsonOp(op policyv1alpha1.OverriderOperator, sub, v string) policyv1alpha1.JSONPatchOperation {
	o := policyv1alpha1.JSONPatchOperation{Operator: op, SubPath: sub}
	if v != "" {
		o.Value = apiextensionsv1.JSON{Raw: []byte(v)}
	}
	return o
}

func yamlOp(op policyv1alpha1.OverriderOperator, sub, v string) policyv1alpha1.YAMLPatchOperation {
	o := policyv1alpha1.YAMLPatchOperation{Operator: op, SubPath: sub}
	if v != "" {
		o.Value = apiextensionsv1.JSON{Raw: []byte(v)}
	}
	return o
}

func TestFieldOverrider(t *testing.T) {
	add, remove, replace := policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace
	runOverriders(t, []overriderCase{
		{name: "json", obj: configMapYAML, o: field("/data/config.json", []policyv1alpha1.JSONPatchOperation{
			jsonOp(replace, "/db/port", "6543"), jsonOp(add, "/db/tls", "true"), jsonOp(remove, "/db/host", "")}, nil),
			want: map[string]string{"/data/config.json": `'{"db":{"port":6543,"tls":true}}'`}},
		{name: "yaml stays yaml", obj: configMapYAML, o: field("/data/config.yaml", nil, []policyv1alpha1.YAMLPatchOperation{
			yamlOp(replace, "/db/port", "6543"), yamlOp(add, "/db/pool", `{"size":5}`)}),
			want: map[string]string{"/data/config.yaml": "|\n  db:\n    host: a\n    pool:\n      size: 5\n    port: 6543\n"}},
		{name: "missing field", obj: configMapYAML, o: field("/data/nope.yaml", nil, []policyv1alpha1.YAMLPatchOperation{yamlOp(remove, "/a", "")}),
			err: "OverridePolicy default/p rule 0 fieldOverrider[0]: fieldPath /data/nope.yaml: /data holds no \"nope.yaml\""},
		{name: "not a string", obj: configMapYAML, o: field("/metadata", nil, []policyv1alpha1.YAMLPatchOperation{yamlOp(remove, "/a", "")}),
			err: "fieldOverrider[0]: fieldPath /metadata holds an object, not a string"},
		{name: "yaml that does not parse", obj: configMapYAML, o: field("/data/broken.yaml", nil, []policyv1alpha1.YAMLPatchOperation{yamlOp(remove, "/a", "")}),
			err: "fieldOverrider[0]: fieldPath /data/broken.yaml does not hold YAML"},
		{name: "json that does not parse", obj: configMapYAML, o: field("/data/config.yaml", []policyv1alpha1.JSONPatchOperation{jsonOp(remove, "/db", "")}, nil),
			err: "fieldOverrider[0]: fieldPath /data/config.yaml does not hold JSON"},
		{name: "an operation that does not apply", obj: configMapYAML, o: field("/data/config.yaml", nil, []policyv1alpha1.YAMLPatchOperation{
			yamlOp(remove, "/db/host", ""), yamlOp(replace, "/db/nope", "1")}),
			err: "fieldOverrider[0]: yaml[1]: replace /db/nope: path not found"},
		{name: "json and yaml", obj: configMapYAML, o: field("/data/config.yaml",
			[]policyv1alpha1.JSONPatchOperation{jsonOp(remove, "/db", "")}, []policyv1alpha1.YAMLPatchOperation{yamlOp(remove, "/db", "")}),
			err: "fieldOverrider[0]: needs exactly one of json and yaml"},
		{name: "an operation without a value", obj: configMapYAML, o: field("/data/config.json", []policyv1alpha1.JSONPatchOperation{jsonOp(add, "/db/x", "")}, nil),
			err: "fieldOverrider[0]: json[0]: add /db/x needs a value"},
	})
}
