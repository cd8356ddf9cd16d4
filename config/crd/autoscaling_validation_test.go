package crd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fhpa is a FederatedHPA with the given spec lines after scaleTargetRef.
func fhpa(spec string) string {
	return "apiVersion: autoscaling.shepherd.io/v1alpha1\nkind: FederatedHPA\nmetadata: {name: web, namespace: team-a}\nspec:\n" +
		"  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n" + indent(spec, "  ")
}

// cronfhpa is a CronFederatedHPA with the given rules.
func cronfhpa(rules string) string {
	return "apiVersion: autoscaling.shepherd.io/v1alpha1\nkind: CronFederatedHPA\nmetadata: {name: web, namespace: team-a}\nspec:\n" +
		"  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  rules:\n" + indent(rules, "  ")
}

// TestAutoscalingExamplesFromKarmadaAreValid: the FederatedHPA and
// CronFederatedHPAs of Karmada's documentation under examples/autoscaling,
// whose apiVersion alone changed, pass the CRDs' validation; the
// *-refused.yaml examples there are refused with their comment's message.
func TestAutoscalingExamplesFromKarmadaAreValid(t *testing.T) {
	validators := map[string]*validator{
		"FederatedHPA":     loadValidator(t, "federatedhpas.autoscaling.shepherd.io"),
		"CronFederatedHPA": loadValidator(t, "cronfederatedhpas.autoscaling.shepherd.io"),
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "autoscaling", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("examples/autoscaling: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		refused := ""
		for line := range strings.SplitSeq(string(data), "\n") {
			if want, ok := strings.CutPrefix(line, "# refused with: "); ok {
				refused = want
			}
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			var kind string
			for line := range strings.SplitSeq(doc, "\n") {
				if k, ok := strings.CutPrefix(line, "kind: "); ok {
					kind = strings.TrimSpace(k)
				}
			}
			v := validators[kind]
			if v == nil {
				t.Fatalf("%s document %d: kind %q is not an autoscaling kind", f, i, kind)
			}
			errs := v.validate(t, doc)
			if refused == "" {
				wantErrors(t, errs, nil)
			} else {
				wantErrors(t, errs, []string{refused})
			}
		}
	}
}

func TestFederatedHPAValidation(t *testing.T) {
	v := loadValidator(t, "federatedhpas.autoscaling.shepherd.io")
	cpu := func(target string) string {
		return "maxReplicas: 5\nmetrics:\n- type: Resource\n  resource:\n    name: cpu\n    target: " + target + "\n"
	}
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"max only", "maxReplicas: 3\n", nil},
		{"min equal to max", "minReplicas: 3\nmaxReplicas: 3\n", nil},
		{"min above max", "minReplicas: 4\nmaxReplicas: 3\n", []string{"spec.minReplicas must not be greater than spec.maxReplicas"}},
		{"min zero", "minReplicas: 0\nmaxReplicas: 3\n", []string{"spec.minReplicas"}},
		{"no max", "minReplicas: 1\n", []string{"spec.maxReplicas: Required value"}},
		{"cpu utilization", cpu("{type: Utilization, averageUtilization: 60}"), nil},
		{"memory average value", "maxReplicas: 5\nmetrics:\n- type: Resource\n  resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}\n", nil},
		{"utilization above 100", cpu("{type: Utilization, averageUtilization: 150}"), []string{"spec.metrics[].resource.target.averageUtilization must be between 1 and 100"}},
		{"utilization 0", cpu("{type: Utilization, averageUtilization: 0}"), []string{"averageUtilization must be between 1 and 100"}},
		{"resource target type Value", cpu("{type: Value, value: 1}"), []string{"spec.metrics[].resource.target.type must be Utilization or AverageValue"}},
		{"unknown metric type", "maxReplicas: 5\nmetrics:\n- type: Queue\n", []string{"spec.metrics[].type must be one of Resource, Pods, Object"}},
		{"resource type without resource", "maxReplicas: 5\nmetrics:\n- type: Resource\n", []string{"spec.metrics[].resource is required when type is Resource"}},
		{"pods", "maxReplicas: 5\nmetrics:\n- type: Pods\n  pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: '10'}}\n", nil},
		{"object", "maxReplicas: 5\nmetrics:\n- type: Object\n  object:\n    describedObject: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: web}\n    metric: {name: rps}\n    target: {type: Value, value: '100'}\n", nil},
		{"pods type without pods", "maxReplicas: 5\nmetrics:\n- type: Pods\n", []string{"spec.metrics[].pods is required when type is Pods"}},
		{"behavior", "maxReplicas: 5\nbehavior:\n  scaleDown:\n    stabilizationWindowSeconds: 60\n    policies: [{type: Percent, value: 50, periodSeconds: 60}]\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErrors(t, v.validate(t, fhpa(tc.spec)), tc.want) })
	}
}

func TestCronFederatedHPAValidation(t *testing.T) {
	v := loadValidator(t, "cronfederatedhpas.autoscaling.shepherd.io")
	for _, tc := range []struct {
		name, rules string
		want        []string
	}{
		{"replicas", "- {name: up, schedule: '0 8 * * *', targetReplicas: 5, timeZone: Europe/Paris}\n", nil},
		{"bounds", "- {name: up, schedule: '@hourly', targetMinReplicas: 2, targetMaxReplicas: 8}\n", nil},
		{"nothing to set", "- {name: up, schedule: '0 8 * * *'}\n", []string{"spec.rules[]: set targetReplicas"}},
		{"min above max", "- {name: up, schedule: '0 8 * * *', targetMinReplicas: 9, targetMaxReplicas: 8}\n", []string{"spec.rules[].targetMinReplicas must not be greater than targetMaxReplicas"}},
		{"duplicate names", "- {name: up, schedule: '0 8 * * *', targetReplicas: 1}\n- {name: up, schedule: '0 9 * * *', targetReplicas: 2}\n", []string{"spec.rules[1]: Duplicate value"}},
		{"empty name", "- {name: '', schedule: '0 8 * * *', targetReplicas: 1}\n", []string{"spec.rules[0].name"}},
		{"history limit", "- {name: up, schedule: '0 8 * * *', targetReplicas: 1, successfulHistoryLimit: 33}\n", []string{"spec.rules[0].successfulHistoryLimit"}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErrors(t, v.validate(t, cronfhpa(tc.rules)), tc.want) })
	}
	wantErrors(t, v.validate(t, strings.Replace(cronfhpa(""), "  rules:\n", "  rules: []\n", 1)), []string{"spec.rules"})
}
