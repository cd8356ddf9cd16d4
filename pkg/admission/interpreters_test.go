package admission

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/pkg/webhookserver/webhooktest"
)

func healthInterpreter(apiVersion, expr string) *configv1alpha1.HealthInterpreter {
	hi := &configv1alpha1.HealthInterpreter{}
	hi.SetGroupVersionKind(configv1alpha1.SchemeGroupVersion.WithKind("HealthInterpreter"))
	hi.Name = "rule"
	hi.Spec.Target = configv1alpha1.HealthTarget{APIVersion: apiVersion, Kind: "Widget"}
	hi.Spec.Health.Expression = expr
	return hi
}

// raw is obj as an admission request carries it; a nil obj is none.
func raw[T any](t *testing.T, obj *T) runtime.RawExtension {
	t.Helper()
	if obj == nil {
		return runtime.RawExtension{}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

// checkAdmission sends one request to v and checks that it is allowed or
// refused, with a message holding every string of wantInMsg.
func checkAdmission(t *testing.T, v admission.Handler, op admissionv1.Operation, obj, old runtime.RawExtension, allowed bool, wantInMsg []string) {
	t.Helper()
	resp := v.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op, Object: obj, OldObject: old}})
	if resp.Allowed != allowed {
		t.Fatalf("allowed = %v, want %v (%v)", resp.Allowed, allowed, resp.Result)
	}
	for _, want := range wantInMsg {
		if resp.Result == nil || !strings.Contains(resp.Result.Message, want) {
			t.Errorf("message %v does not contain %q", resp.Result, want)
		}
	}
}

func TestHealthInterpreterValidator(t *testing.T) {
	const good = `observedObj.status.ready ? "Healthy" : "Unhealthy"`
	const broken = `observedObj.status.ready ? "Healthy"`
	v := HealthInterpreterValidator().Admission(scheme.Scheme)
	cases := []struct {
		name      string
		op        admissionv1.Operation
		obj, old  *configv1alpha1.HealthInterpreter
		allowed   bool
		wantInMsg []string
	}{
		{"good rule created", admissionv1.Create, healthInterpreter("example.io/v1", good), nil, true, nil},
		{"broken rule refused at creation", admissionv1.Create, healthInterpreter("example.io/v1", broken), nil, false,
			[]string{"spec.health.expression", "does not compile", "Syntax error", "fix the CEL expression"}},
		{"wrong result type refused", admissionv1.Create, healthInterpreter("example.io/v1", `1 + 2`), nil, false,
			[]string{"spec.health.expression", "must return a string"}},
		{"the template's variable refused", admissionv1.Create, healthInterpreter("example.io/v1", `object.status.ready`), nil, false,
			[]string{"spec.health.expression", "undeclared reference to 'object'", "it must read observedObj"}},
		{"bad apiVersion refused", admissionv1.Create, healthInterpreter("a/b/c", good), nil, false,
			[]string{"spec.target.apiVersion", "GROUP/VERSION"}},
		{"update breaking the rule refused", admissionv1.Update, healthInterpreter("example.io/v1", broken), healthInterpreter("example.io/v1", good), false,
			[]string{"spec.health.expression"}},
		{"update fixing the rule admitted", admissionv1.Update, healthInterpreter("example.io/v1", good), healthInterpreter("example.io/v1", broken), true, nil},
		{"update leaving a stored broken rule alone admitted", admissionv1.Update, healthInterpreter("example.io/v1", broken), healthInterpreter("example.io/v1", broken), true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkAdmission(t, v, tc.op, raw(t, tc.obj), raw(t, tc.old), tc.allowed, tc.wantInMsg)
		})
	}
}

func componentsCustomization(expr string) *configv1alpha1.ResourceInterpreterCustomization {
	c := &configv1alpha1.ResourceInterpreterCustomization{}
	c.SetGroupVersionKind(configv1alpha1.SchemeGroupVersion.WithKind("ResourceInterpreterCustomization"))
	c.Name = "parts"
	c.Spec.Target = configv1alpha1.HealthTarget{APIVersion: "example.io/v1", Kind: "Widget"}
	c.Spec.Customizations.Components = &configv1alpha1.ComponentCustomization{Expression: expr}
	return c
}

// A customization's components rule is compiled at admission: one that
// does not compile, or whose literal result is wrong whatever the
// workload, is refused naming its field.
func TestCustomizationValidator(t *testing.T) {
	const good = `object.spec.parts.map(p, {'name': p.name, 'replicas': p.replicas, 'podSpec': p.template.spec})`
	const broken = `object.spec.parts.map(p, `
	v := CustomizationValidator().Admission(scheme.Scheme)
	cases := []struct {
		name      string
		op        admissionv1.Operation
		obj, old  *configv1alpha1.ResourceInterpreterCustomization
		allowed   bool
		wantInMsg []string
	}{
		{"good rule created", admissionv1.Create, componentsCustomization(good), nil, true, nil},
		{"a rule that does not compile refused", admissionv1.Create, componentsCustomization(broken), nil, false,
			[]string{"spec.customizations.components.expression", "does not compile"}},
		{"a rule that returns no list refused", admissionv1.Create, componentsCustomization(`object.spec.parts.size()`), nil, false,
			[]string{"spec.customizations.components.expression", "returns int; it must return list(dyn)"}},
		{"negative literal replicas refused", admissionv1.Create, componentsCustomization(`[{'name': 'a', 'replicas': -1}]`), nil, false,
			[]string{"spec.customizations.components.expression", `component [0] "a" has -1 replicas`}},
		{"a literal name twice refused", admissionv1.Create, componentsCustomization(`[{'name': 'a', 'replicas': 1}, {'name': 'a', 'replicas': 1}]`), nil, false,
			[]string{"spec.customizations.components.expression", `component [1] "a" has the name of component [0]`}},
		{"update breaking the rule refused", admissionv1.Update, componentsCustomization(broken), componentsCustomization(good), false,
			[]string{"spec.customizations.components.expression"}},
		{"update fixing the rule admitted", admissionv1.Update, componentsCustomization(good), componentsCustomization(broken), true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkAdmission(t, v, tc.op, raw(t, tc.obj), raw(t, tc.old), tc.allowed, tc.wantInMsg)
		})
	}
}

// rawObject is obj as an admission request carries it.

// TestWebhookManifestMatchesConfiguration keeps the deployable
// configuration and the in-process one the same apart from how the
// webhook is reached.
func TestWebhookManifestMatchesConfiguration(t *testing.T) {
	webhooktest.CheckManifest(t, filepath.Join("..", "..", "config", "controllermanager", "webhook.yaml"), HealthInterpreterWebhookPath,
		&admissionregistrationv1.ValidatingWebhookConfiguration{},
		func(cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.ValidatingWebhookConfiguration {
			return WebhookConfiguration(DefaultWebhookConfigurationName, cc, clusterclient.DefaultSecretsNamespace)
		})
}
