// Package install installs Shepherd's controller manager into a hub and
// removes it again: `shepherd install` and `shepherd uninstall`. What it
// applies is config/default, rendered from the manifests package config
// embeds as kustomize would (Render), so `kubectl apply --server-side -k
// config/default` and `shepherd install` install the same objects.
package install

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/distribution/reference"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/shepherd-io/shepherd/config"
)

// Names of what config/default installs.
const (
	// FieldManager applies every object.
	FieldManager = "shepherd-install"
	// Namespace holds the controller manager.
	Namespace = "shepherd-system"
	// Deployment is the controller manager's Deployment (and
	// ServiceAccount, ClusterRole, Role and bindings).
	Deployment = "shepherd-controller-manager"
	// DefaultTimeout bounds the wait for the CRDs and the Deployment.
	DefaultTimeout = 5 * time.Minute
)

// Manifests are the objects of config/default in the order they are
// applied (see Ordered), with the controller manager's image set to image
// unless it is empty.
func Manifests(image string) ([]*unstructured.Unstructured, error) {
	objs, err := renderWithImage(config.DefaultKustomization, Namespace, Deployment, image)
	if err != nil {
		return nil, err
	}
	return Ordered(objs), nil
}

// renderWithImage renders the kustomization dir of config.Manifests and,
// unless image is empty, sets it on the Deployment ns/name.
func renderWithImage(dir, ns, name, image string) ([]*unstructured.Unstructured, error) {
	objs, err := Render(config.Manifests, dir)
	if err != nil {
		return nil, err
	}
	if image == "" {
		return objs, nil
	}
	if err := ValidateImage(image); err != nil {
		return nil, err
	}
	d := find(objs, "Deployment", ns, name)
	if d == nil {
		return nil, fmt.Errorf("config/%s has no Deployment %s/%s to set the image of", dir, ns, name)
	}
	setImages(d.Object, func(string) string { return image })
	return objs, nil
}

// ValidateImage checks that image is an image reference, e.g.
// registry.example.com/shepherd:v1.2.3.
func ValidateImage(image string) error {
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return fmt.Errorf("--image %q is not an image reference (%v): use e.g. ghcr.io/shepherd-io/shepherd-controller-manager:v0.1.0", image, err)
	}
	return nil
}

// rank orders what is applied: namespaces, then CRDs, then the rest.
func rank(o *unstructured.Unstructured) int {
	switch o.GetKind() {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	}
	return 2
}

// Ordered returns objs in apply order: namespaces, CRDs, then the rest in
// the order config/default lists them.
func Ordered(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := slices.Clone(objs)
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int { return cmp.Compare(rank(a), rank(b)) })
	return out
}

// WriteYAML writes objs as one YAML stream (`shepherd install --dry-run`).
func WriteYAML(w io.Writer, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return err
		}
	}
	return nil
}

// Options configure Install.
type Options struct {
	// Wait for the CRDs to be Established and the Deployment to be
	// Available, for at most Timeout (default DefaultTimeout).
	Wait    bool
	Timeout time.Duration
	// Out receives a line per object applied (nil: none).
	Out io.Writer
}

// Install server-side applies objs (as Manifests returns them) to the hub
// with field manager FieldManager, in order, and with Wait waits for the
// CRDs and the Deployment.
func Install(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, o Options) error {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	if err := Apply(ctx, c, objs, out); err != nil {
		return err
	}
	if !o.Wait {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(o.Timeout, DefaultTimeout))
	defer cancel()
	if err := WaitEstablished(ctx, c, objs); err != nil {
		return err
	}
	fmt.Fprintln(out, "CRDs established")
	for _, d := range objs {
		if d.GetKind() == "Deployment" {
			if err := WaitAvailable(ctx, c, d.GetNamespace(), d.GetName()); err != nil {
				return err
			}
			fmt.Fprintf(out, "Deployment %s/%s available\n", d.GetNamespace(), d.GetName())
		}
	}
	return nil
}

// Apply server-side applies each object in turn.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, out io.Writer) error {
	for _, o := range objs {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(FieldManager), client.ForceOwnership)
		switch {
		case apierrors.IsForbidden(err):
			return fmt.Errorf("applying %s: %w: installing needs rights to create namespaces, ClusterRoles and their bindings (and CRDs on a hub), e.g. cluster-admin", describe(o), err)
		case err != nil:
			return fmt.Errorf("applying %s: %w", describe(o), err)
		}
		fmt.Fprintf(out, "%s applied\n", describe(o))
	}
	return nil
}

// WaitEstablished waits until every CRD among objs is Established.
func WaitEstablished(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		var last string
		err := poll(ctx, func(ctx context.Context) (bool, error) {
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(o.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKey{Name: o.GetName()}, crd); err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok && m["type"] == "Established" {
					last = fmt.Sprintf("%v: %v", m["reason"], m["message"])
					return m["status"] == "True", nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("the CustomResourceDefinition %s is not Established (%s): %w; see `kubectl describe crd %s`", o.GetName(), last, err, o.GetName())
		}
	}
	return nil
}

// WaitAvailable waits until the Deployment has rolled out its current
// spec and is Available.
func WaitAvailable(ctx context.Context, c client.Client, ns, name string) error {
	var last string
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return false, err
		}
		last = fmt.Sprintf("%d of %d replicas updated, %d available", d.Status.UpdatedReplicas, ptrOr(d.Spec.Replicas, 1), d.Status.AvailableReplicas)
		for _, cond := range d.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable {
				if cond.Status != corev1.ConditionTrue {
					last += "; " + cond.Message
				}
				return cond.Status == corev1.ConditionTrue && d.Status.ObservedGeneration >= d.Generation &&
					d.Status.UpdatedReplicas == ptrOr(d.Spec.Replicas, 1), nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the Deployment %s/%s is not Available (%s): %w; see `kubectl -n %s describe deployment %s` and its pods' logs (can the nodes pull the image?), or pass --wait=false",
			ns, name, last, err, ns, name)
	}
	return nil
}

// poll runs check every half second until it is done or ctx ends; errors
// other than NotFound end the wait.
func poll(ctx context.Context, check func(context.Context) (bool, error)) error {
	return wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		done, err := check(ctx)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return done, err
	})
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// find returns the object of kind, namespace and name in objs, or nil.
func find(objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}
