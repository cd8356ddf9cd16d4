package interpreter

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Dependency is an object a workload needs beside it in every cluster it
// runs in: in the workload's namespace, by kind and name.
type Dependency struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

// Dependencies lists, sorted and without duplicates, the objects the
// pod template of obj refers to: ConfigMaps and Secrets mounted as volumes
// (projected ones too) or read into the environment, image pull Secrets,
// PersistentVolumeClaims mounted as volumes, and the ServiceAccount (not
// "default", which every namespace has). References marked optional are
// dependencies too: if the template has them, the member should as well.
// Kinds without a pod template have none.
func (l *Layered) Dependencies(obj *unstructured.Unstructured) ([]Dependency, error) {
	k := l.lookup(obj.GroupVersionKind().GroupKind())
	if k != nil && k.dependenciesFn != nil {
		deps, err := k.dependenciesFn(obj)
		if err != nil {
			return nil, fmt.Errorf("%s %s: dependencies: %w", obj.GetKind(), obj.GetName(), err)
		}
		for i := range deps {
			deps[i].Namespace = obj.GetNamespace()
		}
		slices.SortFunc(deps, compareDependencies)
		return slices.Compact(deps), nil
	}
	if k == nil || k.podSpec == nil {
		return nil, nil
	}
	pod, err := podSpec(obj, k.podSpec)
	if err != nil || pod == nil {
		return nil, err
	}
	ns := obj.GetNamespace()
	var out []Dependency
	add := func(kind, name string) {
		if name == "" {
			return
		}
		out = append(out, Dependency{APIVersion: "v1", Kind: kind, Namespace: ns, Name: name})
	}
	spec := &pod.Spec
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			add("ConfigMap", v.ConfigMap.Name)
		case v.Secret != nil:
			add("Secret", v.Secret.SecretName)
		case v.PersistentVolumeClaim != nil:
			add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add("ConfigMap", s.ConfigMap.Name)
				}
				if s.Secret != nil {
					add("Secret", s.Secret.Name)
				}
			}
		}
	}
	containers := slices.Concat(spec.InitContainers, spec.Containers)
	for i := range spec.EphemeralContainers {
		containers = append(containers, corev1.Container{Env: spec.EphemeralContainers[i].Env, EnvFrom: spec.EphemeralContainers[i].EnvFrom})
	}
	for _, c := range containers {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				add("ConfigMap", e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add("Secret", e.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add("ConfigMap", r.Name)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add("Secret", r.Name)
			}
		}
	}
	for _, s := range spec.ImagePullSecrets {
		add("Secret", s.Name)
	}
	if sa := spec.ServiceAccountName; sa != "default" {
		add("ServiceAccount", sa)
	}
	slices.SortFunc(out, compareDependencies)
	return slices.Compact(out), nil
}

func compareDependencies(a, b Dependency) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.APIVersion, b.APIVersion))
}
