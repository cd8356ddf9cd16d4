package overrides

import (
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

type overriderCase struct {
	name string
	obj  string // YAML
	o    policyv1alpha1.Overriders
	want map[string]string // JSON pointer -> YAML value, or absent
	err  string            // substring of the whole error
}

// runOverriders applies each case's overriders as the one rule of an
// OverridePolicy default/p that selects everything.
func runOverriders(t *testing.T, cases []overriderCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.obj)
			p := op("default", "p", nil, rule(nil, tt.o))
			applied, err := Apply(builtin, obj, member("member1", nil), nil, []policyv1alpha1.OverridePolicy{p})
			wantErr(t, err, tt.err)
			if tt.err != "" {
				return
			}
			if len(applied) != 1 {
				t.Fatalf("applied %v, want one rule", applied)
			}
			checkPaths(t, obj, tt.want)
		})
	}
}

func imageOv(component policyv1alpha1.ImageComponent, op policyv1alpha1.OverriderOperator, value string) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: component, Operator: op, Value: value}}}
}

func imageAt(path string, component policyv1alpha1.ImageComponent, op policyv1alpha1.OverriderOperator, value string) policyv1alpha1.Overriders {
	o := imageOv(component, op, value)
	o.ImageOverrider[0].Predicate = &policyv1alpha1.ImagePredicate{Path: path}
	return o
}

const (
	web     = "/spec/template/spec/containers/0/image"
	sidecar = "/spec/template/spec/containers/1/image"
	initImg = "/spec/template/spec/initContainers/0/image"
)

func TestImageOverrider(t *testing.T) {
	add, remove, replace := policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace
	reg, repo, tag := policyv1alpha1.Registry, policyv1alpha1.Repository, policyv1alpha1.Tag
	runOverriders(t, []overriderCase{
		{name: "registry replace: every container and init container", obj: deploymentYAML, o: imageOv(reg, replace, "mirror.example"),
			want: map[string]string{web: "mirror.example/team/web:v1", sidecar: "mirror.example/envoyproxy/envoy@" + digest, initImg: "mirror.example/busybox:1.36"}},
		{name: "registry with a port", obj: deploymentYAML, o: imageOv(reg, replace, "localhost:5000"),
			want: map[string]string{initImg: "localhost:5000/busybox:1.36"}},
		{name: "registry add appends", obj: podYAML, o: imageOv(reg, add, ".cn"),
			want: map[string]string{"/spec/containers/0/image": "registry.example.cn/app:v1"}},
		{name: "registry add to an image without one", obj: deploymentYAML, o: imageAt(initImg, reg, add, "mirror.example"),
			want: map[string]string{initImg: "mirror.example/busybox:1.36"}},
		{name: "registry add giving no valid host", obj: deploymentYAML, o: imageOv(reg, add, "mirror.example"),
			err: `imageOverrider[0]: spec.template.spec.containers[0]: add Registry "mirror.example" on image "registry.example:5000/team/web:v1": image "registry.example:5000mirror.example/team/web:v1"`},
		{name: "registry remove", obj: deploymentYAML, o: imageOv(reg, remove, ""),
			want: map[string]string{web: "team/web:v1", initImg: "busybox:1.36"}},
		{name: "registry without a dot reads as a repository", obj: podYAML, o: imageOv(reg, replace, "mirror"),
			err: `gives "mirror/app:v1", which reads as registry "" and repository "mirror/app"`},
		{name: "repository replace at a predicate path", obj: deploymentYAML, o: imageAt(web, repo, replace, "other/web"),
			want: map[string]string{web: "registry.example:5000/other/web:v1", initImg: "busybox:1.36"}},
		{name: "repository add", obj: deploymentYAML, o: imageAt(web, repo, add, "-cn"),
			want: map[string]string{web: "registry.example:5000/team/web-cn:v1"}},
		{name: "repository remove leaves no image", obj: podYAML, o: imageOv(repo, remove, ""),
			err: `imageOverrider[0]: spec.containers[0]: remove Repository "" on image "registry.example/app:v1"`},
		{name: "tag replace drops a digest", obj: deploymentYAML, o: imageOv(tag, replace, "v2"),
			want: map[string]string{web: "registry.example:5000/team/web:v2", sidecar: "envoyproxy/envoy:v2", initImg: "busybox:v2"}},
		{name: "tag replace with a digest drops the tag", obj: deploymentYAML, o: imageAt(web, tag, replace, digest),
			want: map[string]string{web: "registry.example:5000/team/web@" + digest}},
		{name: "tag add appends", obj: deploymentYAML, o: imageAt(initImg, tag, add, "-musl"),
			want: map[string]string{initImg: "busybox:1.36-musl"}},
		{name: "tag remove: the tag, else the digest", obj: deploymentYAML, o: imageOv(tag, remove, ""),
			want: map[string]string{web: "registry.example:5000/team/web", sidecar: "envoyproxy/envoy"}},
		{name: "replace without a value", obj: podYAML, o: imageOv(reg, replace, ""),
			err: "imageOverrider[0]: spec.containers[0]: replace Registry needs a value"},
		{name: "tag that is neither", obj: podYAML, o: imageOv(tag, replace, "not a tag"),
			err: `replace tag "not a tag" gives "not a tag", neither a tag nor a digest`},
		{name: "cronjob", obj: cronJobYAML, o: imageOv(reg, replace, "mirror.example"),
			want: map[string]string{"/spec/jobTemplate/spec/template/spec/containers/0/image": "mirror.example/job:v1"}},
		{name: "a kind without images needs a predicate", obj: configMapYAML, o: imageOv(reg, replace, "mirror.example"),
			err: "OverridePolicy default/p rule 0 imageOverrider[0]: ConfigMap has no container images; add predicate.path or narrow resourceSelectors"},
		{name: "a predicate on any kind", obj: configMapYAML, o: imageAt("/data/image", reg, replace, "mirror.example"),
			want: map[string]string{"/data/image": "mirror.example/nginx:1.25"}},
		{name: "predicate path not found", obj: deploymentYAML, o: imageAt("/spec/template/spec/containers/5/image", tag, remove, ""),
			err: "imageOverrider[0]: predicate.path /spec/template/spec/containers/5/image: /spec/template/spec/containers holds no \"5\""},
		{name: "predicate path not a string", obj: deploymentYAML, o: imageAt("/spec/replicas", tag, remove, ""),
			err: "predicate.path /spec/replicas holds a number, not an image"},
		{name: "invalid image in the object", obj: `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: default}, spec: {containers: [{name: a, image: "Bad Image"}]}}`,
			o: imageOv(tag, replace, "v2"), err: `image "Bad Image"`},
	})
}

func cmdArgs(field string, container string, op policyv1alpha1.OverriderOperator, values ...string) policyv1alpha1.Overriders {
	c := []policyv1alpha1.CommandArgsOverrider{{ContainerName: container, Operator: op, Value: values}}
	if field == "command" {
		return policyv1alpha1.Overriders{CommandOverrider: c}
	}
	return policyv1alpha1.Overriders{ArgsOverrider: c}
}

func TestCommandArgsOverriders(t *testing.T) {
	add, remove := policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove
	const c0 = "/spec/template/spec/containers/0/"
	runOverriders(t, []overriderCase{
		{name: "command add appends", obj: deploymentYAML, o: cmdArgs("command", "web", add, "--verbose"),
			want: map[string]string{c0 + "command": "[web, --serve, --verbose]", c0 + "args": "[--debug, --port=80]"}},
		{name: "args remove drops every equal item", obj: deploymentYAML, o: cmdArgs("args", "web", remove, "--debug", "--absent"),
			want: map[string]string{c0 + "args": "[--port=80]"}},
		{name: "add creates the list", obj: deploymentYAML, o: cmdArgs("args", "sidecar", add, "-l", "debug"),
			want: map[string]string{"/spec/template/spec/containers/1/args": "[-l, debug]"}},
		{name: "init containers too", obj: deploymentYAML, o: cmdArgs("command", "init", add, "sh"),
			want: map[string]string{"/spec/template/spec/initContainers/0/command": "[sh]"}},
		{name: "remove from a missing list", obj: deploymentYAML, o: cmdArgs("command", "sidecar", remove, "x"),
			want: map[string]string{"/spec/template/spec/containers/1/command": absent}},
		{name: "a pod", obj: podYAML, o: cmdArgs("args", "app", add, "--v=2"),
			want: map[string]string{"/spec/containers/0/args": "[--v=2]"}},
		{name: "unknown container", obj: deploymentYAML, o: cmdArgs("args", "db", add, "x"),
			err: `OverridePolicy default/p rule 0 argsOverrider[0]: container "db" not found in Deployment web (containers: web, sidecar, init)`},
		{name: "a kind without containers", obj: configMapYAML, o: cmdArgs("command", "web", add, "x"),
			err: "commandOverrider[0]: ConfigMap has no containers"},
		{name: "no replace, as in Karmada", obj: deploymentYAML, o: cmdArgs("command", "web", policyv1alpha1.OverriderOpReplace, "x"),
			err: `operator "replace": use add or remove`},
	})
}

func labelsOrAnnotations(annotations bool, op policyv1alpha1.OverriderOperator, kv map[string]string) policyv1alpha1.Overriders {
	o := []policyv1alpha1.LabelAnnotationOverrider{{Operator: op, Value: kv}}
	if annotations {
		return policyv1alpha1.Overriders{AnnotationsOverrider: o}
	}
	return policyv1alpha1.Overriders{LabelsOverrider: o}
}

func TestLabelAnnotationOverriders(t *testing.T) {
	add, remove, replace := policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace
	runOverriders(t, []overriderCase{
		{name: "labels add sets and overwrites", obj: deploymentYAML, o: labelsOrAnnotations(false, add, map[string]string{"app": "api", "env": "prod"}),
			want: map[string]string{"/metadata/labels": "{app: api, env: prod}"}},
		{name: "labels remove existing keys", obj: deploymentYAML, o: labelsOrAnnotations(false, remove, map[string]string{"app": "", "nope": ""}),
			want: map[string]string{"/metadata/labels": "{}"}},
		{name: "labels replace only existing keys", obj: deploymentYAML, o: labelsOrAnnotations(false, replace, map[string]string{"app": "api", "env": "prod"}),
			want: map[string]string{"/metadata/labels": "{app: api}"}},
		{name: "labels add creates the map", obj: configMapYAML, o: labelsOrAnnotations(false, add, map[string]string{"example.com/team": "a"}),
			want: map[string]string{"/metadata/labels": "{example.com/team: a}"}},
		{name: "invalid label value", obj: deploymentYAML, o: labelsOrAnnotations(false, add, map[string]string{"env": "not valid!"}),
			err: `labelsOverrider[0]: label "env"="not valid!"`},
		{name: "annotations add", obj: deploymentYAML, o: labelsOrAnnotations(true, add, map[string]string{"example.com/note": "any text, even spaces"}),
			want: map[string]string{"/metadata/annotations": "{example.com/note: 'any text, even spaces'}", "/metadata/labels": "{app: web}"}},
		{name: "annotations remove", obj: deploymentYAML, o: labelsOrAnnotations(true, remove, map[string]string{"x": ""}),
			want: map[string]string{"/metadata/annotations": absent}},
		{name: "invalid annotation key", obj: deploymentYAML, o: labelsOrAnnotations(true, add, map[string]string{"bad key": "x"}),
			err: `annotationsOverrider[0]: annotation "bad key"="x"`},
	})
}
