package overrides

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// builtin are the built-in kinds' pod spec paths.
var builtin = interpreter.New()

const rolloutYAML = `
apiVersion: example.io/v1
kind: Rollout
metadata: {name: web, namespace: default}
spec:
  pod:
    containers:
    - {name: web, image: registry.example/team/web:v1}
`

// A kind the interpreter is taught (a ResourceInterpreterCustomization's
// podSpecPath) gets its images, commands and args overridden like a
// built-in workload; without the customization it has no containers and
// the overrider says so.
func TestOverridersFollowTheInterpreter(t *testing.T) {
	rollout := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Rollout"}
	taught := interpreter.New()
	taught.SetCustom(rollout, &interpreter.Custom{PodSpec: []string{"spec", "pod"}})
	o := policyv1alpha1.Overriders{
		ImageOverrider:   []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.example"}},
		CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"serve"}}},
	}
	p := op("default", "p", nil, rule(nil, o))

	obj := object(t, rolloutYAML)
	if _, err := Apply(taught, obj, member("member1", nil), nil, []policyv1alpha1.OverridePolicy{p}); err != nil {
		t.Fatalf("taught kind: %v", err)
	}
	checkPaths(t, obj, map[string]string{"/spec/pod/containers/0/image": "mirror.example/team/web:v1", "/spec/pod/containers/0/command/0": "serve"})

	_, err := Apply(builtin, object(t, rolloutYAML), member("member1", nil), nil, []policyv1alpha1.OverridePolicy{p})
	if err == nil || !strings.Contains(err.Error(), "Rollout has no container images; add predicate.path") {
		t.Errorf("untaught kind: err = %v, want the imageOverrider refused with its fix", err)
	}
	if _, err := Apply(nil, object(t, rolloutYAML), member("member1", nil), nil, nil); err == nil {
		t.Error("Apply without kinds accepted")
	}
}
