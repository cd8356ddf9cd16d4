package overrides

import (
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  uid: 1234
  resourceVersion: "7"
  labels: {app: web}
spec:
  replicas: 2
  template:
    spec:
      initContainers:
      - name: init
        image: busybox:1.36
      containers:
      - name: web
        image: registry.example:5000/team/web:v1
        command: [web, --serve]
        args: [--debug, --port=80]
      - name: sidecar
        image: envoyproxy/envoy@` + digest + `
`

const configMapYAML = `
apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: default}
data:
  image: nginx:1.25
  config.json: '{"db":{"port":5432,"host":"a"}}'
  config.yaml: |
    db:
      port: 5432
      host: a
  broken.yaml: "a: ["
`

const cronJobYAML = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: job
            image: job:v1
`

const podYAML = `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: app
    image: registry.example/app:v1
`

// object decodes YAML as the API machinery does (whole numbers int64).
func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// value decodes a YAML or JSON fragment the same way, for comparisons.
func value(t *testing.T, y string) any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := utiljson.Unmarshal(j, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func js(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

// absent marks a path that must not exist.
const absent = "<absent>"

// checkPaths checks the values at JSON pointers of obj; want values are
// YAML fragments, or absent.
func checkPaths(t *testing.T, obj *unstructured.Unstructured, want map[string]string) {
	t.Helper()
	for path, w := range want {
		ptr, err := jsonpointer.Parse(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ptr.Get(obj.Object)
		if w == absent {
			if err == nil {
				t.Errorf("%s = %v, want it absent", path, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if wv := value(t, w); !reflect.DeepEqual(got, wv) {
			t.Errorf("%s = %#v, want %#v", path, got, wv)
		}
	}
}

func member(name string, labels map[string]string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func rule(target *policyv1alpha1.ClusterAffinity, o policyv1alpha1.Overriders) policyv1alpha1.RuleWithCluster {
	return policyv1alpha1.RuleWithCluster{TargetCluster: target, Overriders: o}
}

func op(ns, name string, sels []policyv1alpha1.ResourceSelector, rules ...policyv1alpha1.RuleWithCluster) policyv1alpha1.OverridePolicy {
	return policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       policyv1alpha1.OverrideSpec{ResourceSelectors: sels, OverrideRules: rules},
	}
}

func cop(name string, sels []policyv1alpha1.ResourceSelector, rules ...policyv1alpha1.RuleWithCluster) policyv1alpha1.ClusterOverridePolicy {
	return policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1alpha1.OverrideSpec{ResourceSelectors: sels, OverrideRules: rules},
	}
}

func selectors(s ...policyv1alpha1.ResourceSelector) []policyv1alpha1.ResourceSelector { return s }

func byKind(apiVersion, kind string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind}
}

func byName(apiVersion, kind, name string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: name}
}

func byLabel(apiVersion, kind string, labels map[string]string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}
}

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}
