package scenario

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/policymatch"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

const agreeCluster = `
apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: member-1}
spec: {apiEndpoint: "https://m1:6443"}
`

// agreePolicy is a policy whose placement names the policy itself, so that
// a workload tells which policy placed it.
func agreePolicy(kind, namespace, name string, priority int, selector string) string {
	meta := "{name: " + name + "}"
	if namespace != "" {
		meta = "{name: " + name + ", namespace: " + namespace + "}"
	}
	return `
apiVersion: policy.shepherd.io/v1alpha1
kind: ` + kind + `
metadata: ` + meta + `
spec:
  priority: ` + strconv.Itoa(priority) + `
  resourceSelectors: [` + selector + `]
  placement: {clusterAffinity: {clusterNames: [` + name + `]}}
`
}

// object decodes a template as a client reads it from the API.
func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return obj
}

// detectorsChoice is the policy the detector would bind tmpl to, from the
// same documents decoded as the hub's API would hand them to it: "" when it
// binds none.
func detectorsChoice(t *testing.T, tmpl string, policies []string) string {
	t.Helper()
	obj := object(t, tmpl)
	if resourceselector.ExcludedObject(obj) {
		return ""
	}
	var pps, cpps []policyv1alpha1.PolicyObject
	for _, doc := range policies {
		if strings.Contains(doc, "kind: PropagationPolicy") {
			p := &policyv1alpha1.PropagationPolicy{}
			if err := yaml.Unmarshal([]byte(doc), p); err != nil {
				t.Fatal(err)
			}
			pps = append(pps, p)
			continue
		}
		p := &policyv1alpha1.ClusterPropagationPolicy{}
		if err := yaml.Unmarshal([]byte(doc), p); err != nil {
			t.Fatal(err)
		}
		p.Namespace = "" // the API server keeps no namespace for a cluster-scoped object
		cpps = append(cpps, p)
	}
	if p, _ := policymatch.Govern(resourceselector.TemplateOf(obj), nil, pps, cpps); p != nil {
		return p.GetName()
	}
	return ""
}

// TestWhatIfPicksTheDetectorsPolicy: the policy a plan (and the dashboard's
// what-if) places a template by is the one the detector binds it to.
// Selectors match by API group and kind, whatever the version either side
// is written in; a PropagationPolicy selects only its own namespace;
// templates the hub never propagates are bound by no policy.
func TestWhatIfPicksTheDetectorsPolicy(t *testing.T) {
	const web = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 2, template: {spec: {containers: [{name: a, image: x}]}}}
`
	all := agreePolicy("ClusterPropagationPolicy", "", "all", 0, "{apiVersion: apps/v1, kind: Deployment}")
	for _, tc := range []struct {
		name     string
		template string
		policies []string
		want     string // "" for unmatched
	}{
		{"a selector of another version of the template's group", web,
			[]string{all, agreePolicy("PropagationPolicy", "shop", "beta", 0, "{apiVersion: apps/v1beta1, kind: Deployment, name: web}")}, "beta"},
		{"a template in another version than the selector", strings.Replace(web, "apps/v1", "apps/v1beta2", 1),
			[]string{agreePolicy("PropagationPolicy", "shop", "v1", 0, "{apiVersion: apps/v1, kind: Deployment}")}, "v1"},
		{"the kind in another group", web,
			[]string{agreePolicy("PropagationPolicy", "shop", "ext", 0, "{apiVersion: extensions/v1beta1, kind: Deployment}")}, ""},
		{"a PropagationPolicy's selector naming another namespace", web,
			[]string{all, agreePolicy("PropagationPolicy", "shop", "elsewhere", 0, "{apiVersion: apps/v1, kind: Deployment, namespace: ops}")}, "all"},
		{"a ClusterPropagationPolicy written with a namespace", strings.Replace(web, "shop", "ops", 1),
			[]string{agreePolicy("ClusterPropagationPolicy", "shop", "cluster-wide", 0, "{apiVersion: apps/v1, kind: Deployment}")}, "cluster-wide"},
		{"a label selector of another version beats a kind-wide one", strings.Replace(web, "namespace: shop", "namespace: shop, labels: {app: web}", 1),
			[]string{agreePolicy("PropagationPolicy", "shop", "by-kind", 9, "{apiVersion: apps/v1, kind: Deployment}"),
				agreePolicy("PropagationPolicy", "shop", "by-label", 0, "{apiVersion: apps/v1beta2, kind: Deployment, labelSelector: {matchLabels: {app: web}}}")}, "by-label"},
		{"a template the hub never propagates", strings.Replace(web, "shop", "kube-system", 1), []string{all}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			detector := detectorsChoice(t, tc.template, tc.policies)
			if detector != tc.want {
				t.Fatalf("the detector binds %q, want %q", detector, tc.want)
			}
			docs := append([]string{agreeCluster, tc.template}, tc.policies...)
			s := parse(t, strings.Join(docs, "\n---\n"))
			var got string
			switch {
			case len(s.Workloads) == 1:
				got = s.Workloads[0].Placement.ClusterAffinity.ClusterNames[0]
			case len(s.Workloads) > 1:
				t.Fatalf("%d workloads from one template", len(s.Workloads))
			case len(s.Unmatched) != 1:
				t.Fatalf("neither placed nor unmatched: %+v", s)
			}
			if got != detector {
				t.Errorf("the what-if places it by %q, the detector binds it to %q", got, detector)
			}
		})
	}
}

// widgetInterpreter knows example.io Widgets as a customization teaches
// them: spec.size replicas, each running the pod spec at spec.pod.
func widgetInterpreter() interpreter.Interpreter {
	in := interpreter.New()
	in.SetCustom(schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}, &interpreter.Custom{
		Replicas: func(o *unstructured.Unstructured) (int64, error) {
			n, _, err := unstructured.NestedInt64(o.Object, "spec", "size")
			return n, err
		},
		ReplicasPath: []string{"spec", "size"},
		PodSpec:      []string{"spec", "pod"},
	})
	return in
}

// TestWhatIfReplicasAreTheDetectors: a template's replicas and what one
// replica requests are what the interpreter reads, as in the binding the
// detector writes and the scheduler places: a Job runs no more pods at
// once than its completions, the pod overhead counts, and a customized
// kind is read as taught.
func TestWhatIfReplicasAreTheDetectors(t *testing.T) {
	customized := widgetInterpreter()
	const policy = `
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: ops}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job}, {apiVersion: apps/v1, kind: Deployment}, {apiVersion: example.io/v1, kind: Widget}]
`
	for _, tc := range []struct {
		name     string
		kinds    interpreter.Interpreter
		template string
		replicas int32
		milliCPU int64
	}{
		{"a Job with fewer completions than parallelism", interpreter.Builtin(), `
apiVersion: batch/v1
kind: Job
metadata: {name: job, namespace: ops}
spec: {parallelism: 5, completions: 2, template: {spec: {containers: [{name: a, image: x, resources: {requests: {cpu: 300m}}}]}}}
`, 2, 300},
		{"a Job without completions", interpreter.Builtin(), `
apiVersion: batch/v1
kind: Job
metadata: {name: job, namespace: ops}
spec: {parallelism: 5, template: {spec: {containers: [{name: a, image: x, resources: {requests: {cpu: 300m}}}]}}}
`, 5, 300},
		{"pod overhead", interpreter.Builtin(), `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ops}
spec: {replicas: 3, template: {spec: {overhead: {cpu: 250m}, containers: [{name: a, image: x, resources: {requests: {cpu: 500m}}}]}}}
`, 3, 750},
		{"a limit without a request", interpreter.Builtin(), `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ops}
spec: {replicas: 1, template: {spec: {containers: [{name: a, image: x, resources: {limits: {cpu: "1"}}}]}}}
`, 1, 1000},
		{"a customized kind", customized, `
apiVersion: example.io/v1
kind: Widget
metadata: {name: w, namespace: ops}
spec: {size: 4, pod: {containers: [{name: a, image: x, resources: {requests: {cpu: 200m}}}]}}
`, 4, 200},
		{"the same kind, not customized", interpreter.Builtin(), `
apiVersion: example.io/v1
kind: Widget
metadata: {name: w, namespace: ops}
spec: {size: 4, pod: {containers: [{name: a, image: x, resources: {requests: {cpu: 200m}}}]}}
`, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replicas, _, err := tc.kinds.Replicas(object(t, tc.template))
			if err != nil || replicas != tc.replicas {
				t.Fatalf("the binding would carry %d replicas (%v), want %d", replicas, err, tc.replicas)
			}
			s, err := Parse(strings.NewReader(agreeCluster+"\n---\n"+policy+"\n---\n"+tc.template), now, tc.kinds)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Workloads) != 1 {
				t.Fatalf("%d workloads, unmatched %v", len(s.Workloads), s.Unmatched)
			}
			w := s.Workloads[0]
			if w.Replicas != tc.replicas || w.Request.MilliCPU != tc.milliCPU {
				t.Errorf("what-if: %d replicas of %dm CPU, want %d of %dm", w.Replicas, w.Request.MilliCPU, tc.replicas, tc.milliCPU)
			}
		})
	}
}
