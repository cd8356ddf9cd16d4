package charts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/shepherd-io/shepherd/pkg/install"
)

// chartLabels are the labels the chart adds to every object it templates
// (not to pods or selectors); config/default has none of them.
var chartLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by"}

// id names an object: Kind namespace/name.
func id(o *unstructured.Unstructured) string {
	return strings.TrimSpace(o.GetKind() + " " + strings.TrimPrefix(o.GetNamespace()+"/"+o.GetName(), "/"))
}

// normalized is o as JSON without the chart's labels, so the chart's
// objects compare with config/default's.
func normalized(t *testing.T, o *unstructured.Unstructured) string {
	t.Helper()
	o = o.DeepCopy()
	labels := o.GetLabels()
	for _, l := range chartLabels {
		delete(labels, l)
	}
	if len(labels) == 0 {
		unstructured.RemoveNestedField(o.Object, "metadata", "labels")
	} else {
		o.SetLabels(labels)
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func byID(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[id(o)] = o
	}
	return out
}

// render renders the chart into shepherd-system with --set assignments.
func render(t *testing.T, sets ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	vals, err := Values(sets...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Render(install.Namespace, vals)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			if got := o.GetLabels()["app.kubernetes.io/managed-by"]; got != "Helm" {
				t.Errorf("%s lacks the label app.kubernetes.io/managed-by: Helm", id(o))
			}
		}
	}
	return byID(objs)
}

// TestDefaultsInstallWhatConfigDefaultInstalls: with its default values
// the chart renders every object of config/default (as `shepherd install`
// and `kubectl apply -k` apply them) and no other, equal but for the
// chart's labels. The namespace is Helm's (--create-namespace).
func TestDefaultsInstallWhatConfigDefaultInstalls(t *testing.T) {
	want, err := install.Manifests("")
	if err != nil {
		t.Fatal(err)
	}
	got := render(t)
	seen := map[string]bool{}
	for _, w := range want {
		if w.GetKind() == "Namespace" {
			continue
		}
		seen[id(w)] = true
		g, ok := got[id(w)]
		switch {
		case !ok:
			t.Errorf("%s: config/default installs it, the chart does not", id(w))
		case normalized(t, g) != normalized(t, w):
			t.Errorf("%s differs:\nconfig/default: %s\nchart:          %s", id(w), normalized(t, w), normalized(t, g))
		}
	}
	for k := range got {
		if !seen[k] {
			t.Errorf("%s: the chart installs it, config/default does not", k)
		}
	}
}

// field is the value at path in obj, printed (numbers decode as float64).
func field(obj map[string]any, path ...string) string {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok {
		return "<none>"
	}
	return fmt.Sprint(v)
}

// container is the first container of a Deployment.
func container(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	if d == nil {
		t.Fatal("no Deployment")
	}
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	return cs[0].(map[string]any)
}

func args(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	a, _, _ := unstructured.NestedStringSlice(container(t, d), "args")
	return a
}

const (
	cm  = "Deployment shepherd-system/shepherd-controller-manager"
	vwc = "ValidatingWebhookConfiguration shepherd-healthinterpreter"
)

// TestValues: each value changes what it says, and nothing it does not.
func TestValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sets  []string
		check func(t *testing.T, objs map[string]*unstructured.Unstructured)
	}{
		{"image by tag and digest", []string{"image.repository=registry.example.com/cm,image.tag=v1.2.3,image.digest=sha256:" + strings.Repeat("a", 64) + ",image.pullPolicy=IfNotPresent"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				c := container(t, objs[cm])
				if c["image"] != "registry.example.com/cm:v1.2.3@sha256:"+strings.Repeat("a", 64) || c["imagePullPolicy"] != "IfNotPresent" {
					t.Errorf("image %v, pull policy %v", c["image"], c["imagePullPolicy"])
				}
			}},
		{"replicas and resources", []string{"replicas=3,resources.requests.cpu=1,resources.limits.memory=4Gi"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				n := field(objs[cm].Object, "spec", "replicas")
				cpu := field(container(t, objs[cm]), "resources", "requests", "cpu")
				mem := field(container(t, objs[cm]), "resources", "limits", "memory")
				if n != "3" || cpu != "1" || mem != "4Gi" {
					t.Errorf("replicas %s, cpu %s, memory limit %s", n, cpu, mem)
				}
			}},
		{"one replica without leader election", []string{"replicas=1,leaderElection.enabled=false,podDisruptionBudget.enabled=false"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				a := args(t, objs[cm])
				if !slices.Contains(a, "--leader-elect=false") || slices.Contains(a, "--leader-elect") || slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "--leader-elect-identity") }) {
					t.Errorf("args %q", a)
				}
				if objs["PodDisruptionBudget shepherd-system/shepherd-controller-manager"] != nil {
					t.Error("a PodDisruptionBudget")
				}
			}},
		{"lease timing", []string{"leaderElection.leaseDuration=30s,leaderElection.renewDeadline=20s,leaderElection.retryPeriod=4s"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				a := args(t, objs[cm])
				for _, w := range []string{"--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=4s"} {
					if !slices.Contains(a, w) {
						t.Errorf("args %q lack %s", a, w)
					}
				}
			}},
		{"no priority levels", []string{"flowControl.enabled=false"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				for k := range objs {
					if strings.HasPrefix(k, "FlowSchema ") || strings.HasPrefix(k, "PriorityLevelConfiguration ") {
						t.Errorf("%s rendered", k)
					}
				}
			}},
		{"scheduling shares", []string{"flowControl.scheduling.nominalConcurrencyShares=80,flowControl.status.nominalConcurrencyShares=5"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				s := field(objs["PriorityLevelConfiguration shepherd-scheduling"].Object, "spec", "limited", "nominalConcurrencyShares")
				st := field(objs["PriorityLevelConfiguration shepherd-status"].Object, "spec", "limited", "nominalConcurrencyShares")
				if s != "80" || st != "5" {
					t.Errorf("shares %s and %s", s, st)
				}
			}},
		{"no webhooks", []string{"webhooks.enabled=false"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				if objs[vwc] != nil || objs["Service shepherd-system/shepherd-webhook"] != nil {
					t.Error("webhook configuration or Service rendered")
				}
				if a := args(t, objs[cm]); slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "--webhook") }) {
					t.Errorf("args %q", a)
				}
			}},
		{"webhooks by URL, failing open", []string{"webhooks.url=https://shepherd.example.com:8443/,webhooks.failurePolicy=Ignore,webhooks.timeoutSeconds=10"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				if objs["Service shepherd-system/shepherd-webhook"] != nil {
					t.Error("the webhook Service is rendered though a URL replaces it")
				}
				hooks, _, _ := unstructured.NestedSlice(objs[vwc].Object, "webhooks")
				for _, h := range hooks {
					h := h.(map[string]any)
					url, _, _ := unstructured.NestedString(h, "clientConfig", "url")
					if !strings.HasPrefix(url, "https://shepherd.example.com:8443/validate-") || h["failurePolicy"] != "Ignore" || field(h, "timeoutSeconds") != "10" {
						t.Errorf("webhook %v: url %s, failurePolicy %v, timeout %v", h["name"], url, h["failurePolicy"], h["timeoutSeconds"])
					}
				}
				if a := args(t, objs[cm]); !slices.Contains(a, "--webhook-dns-name=shepherd.example.com") {
					t.Errorf("args %q: want the URL's host in the certificate", a)
				}
			}},
		{"extra RBAC", []string{"rbac.extraRules[0].apiGroups[0]=example.com,rbac.extraRules[0].resources[0]=widgets,rbac.extraRules[0].verbs[0]=get"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				rules, _, _ := unstructured.NestedSlice(objs["ClusterRole shepherd-controller-manager"].Object, "rules")
				last, _ := json.Marshal(rules[len(rules)-1])
				if string(last) != `{"apiGroups":["example.com"],"resources":["widgets"],"verbs":["get"]}` {
					t.Errorf("last rule %s", last)
				}
				defaults, _, _ := unstructured.NestedSlice(render(t)["ClusterRole shepherd-controller-manager"].Object, "rules")
				if len(rules) != len(defaults)+1 {
					t.Errorf("%d rules, want the %d generated ones and the extra one", len(rules), len(defaults))
				}
			}},
		{"extra args, scheduling", []string{"extraArgs[0]=--scheduler-workers=32,nodeSelector.pool=system,priorityClassName=system-cluster-critical"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				if a := args(t, objs[cm]); a[len(a)-1] != "--scheduler-workers=32" {
					t.Errorf("args %q", a)
				}
				pool, _, _ := unstructured.NestedString(objs[cm].Object, "spec", "template", "spec", "nodeSelector", "pool")
				pc, _, _ := unstructured.NestedString(objs[cm].Object, "spec", "template", "spec", "priorityClassName")
				if pool != "system" || pc != "system-cluster-critical" {
					t.Errorf("nodeSelector pool %q, priorityClassName %q", pool, pc)
				}
			}},
		{"dashboard", []string{"dashboard.enabled=true"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				want := examples(t)
				for k, w := range want {
					if g := objs[k]; g == nil {
						t.Errorf("%s: the example has it, the chart does not", k)
					} else if normalized(t, g) != normalized(t, w) {
						t.Errorf("%s differs:\nexample: %s\nchart:   %s", k, normalized(t, w), normalized(t, g))
					}
				}
				if n := len(objs) - len(render(t)); n != len(want) {
					t.Errorf("the dashboard adds %d objects, the examples have %d", n, len(want))
				}
			}},
		{"read-only dashboard", []string{"dashboard.enabled=true,dashboard.readOnly=true,dashboard.image.tag=v1"},
			func(t *testing.T, objs map[string]*unstructured.Unstructured) {
				d := objs["Deployment shepherd-system/shepherd-dashboard"]
				if a := args(t, d); !slices.Contains(a, "--read-only") || container(t, d)["image"] != "ghcr.io/shepherd-io/shepherd:v1" {
					t.Errorf("args %q, image %v", a, container(t, d)["image"])
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, render(t, tc.sets...)) })
	}
}

// examples are the dashboard's objects of examples/dashboard: in-hub.yaml
// and the viewer ClusterRole of viewer.yaml.
func examples(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, f := range []string{"in-hub.yaml", "viewer.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", "dashboard", f))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := Decode(string(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if f == "in-hub.yaml" || o.GetKind() == "ClusterRole" {
				out[id(o)] = o
			}
		}
	}
	return out
}

// TestAnotherNamespace: every namespaced object, reference and flag
// follows the release's namespace; credentials are read from it.
func TestAnotherNamespace(t *testing.T) {
	objs, err := Render("fleet-system", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		data, _ := json.Marshal(o.Object)
		if o.GetKind() != "CustomResourceDefinition" && strings.Contains(string(data), install.Namespace) {
			t.Errorf("%s still names %s: %s", id(o), install.Namespace, data)
		}
	}
	d := byID(objs)["Deployment fleet-system/shepherd-controller-manager"]
	if a := args(t, d); !slices.Contains(a, "--cluster-secrets-namespace=fleet-system") || !slices.Contains(a, "--namespace=fleet-system") {
		t.Errorf("args %q", a)
	}
}

// TestBadValuesAreRefused: a bad value is refused before anything is
// applied, with an error naming it.
func TestBadValuesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want []string
	}{
		{"replicas=-1", []string{"replicas", "minimum"}},
		{"replicas=two", []string{"replicas", "integer"}},
		{"replica=2", []string{"replica", "additional"}},
		{"image.digest=sha256:abc", []string{"digest"}},
		{"image.repository=", []string{"repository"}},
		{"image.pullPolicy=Sometimes", []string{"pullPolicy"}},
		{"webhooks.failurePolicy=Maybe", []string{"failurePolicy"}},
		{"webhooks.timeoutSeconds=60", []string{"timeoutSeconds"}},
		{"webhooks.url=http://shepherd.example.com", []string{"url"}},
		{"leaderElection.leaseDuration=15", []string{"leaseDuration"}},
		{"extraArgs[0]=scheduler-workers=3", []string{"extraArgs"}},
		{"flowControl.scheduling.nominalConcurrencyShares=0", []string{"nominalConcurrencyShares"}},
		{"rbac.extraRules[0].resources[0]=widgets", []string{"verbs"}},
		{"leaderElection.enabled=false", []string{"leaderElection.enabled is false", "set leaderElection.enabled=true or replicas=1"}},
		{"replicas=1", []string{"podDisruptionBudget.minAvailable (1) must be below replicas (1)"}},
	} {
		t.Run(tc.set, func(t *testing.T) {
			vals, err := Values(tc.set)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Render(install.Namespace, vals)
			if err == nil {
				t.Fatalf("--set %s was accepted", tc.set)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
