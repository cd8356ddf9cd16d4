package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

func manifests(t *testing.T, image string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Manifests(image)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func images(o *unstructured.Unstructured) []string {
	var out []string
	setImages(o.Object, func(image string) string { out = append(out, image); return image })
	return out
}

func TestManifests(t *testing.T) {
	objs := manifests(t, "")
	if k := objs[0].GetKind(); k != "Namespace" {
		t.Errorf("first object is a %s, want the Namespace", k)
	}
	seenOther := false
	for _, o := range objs[1:] {
		switch {
		case o.GetKind() == "CustomResourceDefinition" && seenOther:
			t.Errorf("CRD %s comes after other objects: CRDs are applied right after the namespace", o.GetName())
		case o.GetKind() != "CustomResourceDefinition":
			seenOther = true
		}
	}
	d := find(objs, "Deployment", Namespace, Deployment)
	if got := images(d); len(got) != 1 || got[0] != "ghcr.io/shepherd-io/shepherd-controller-manager:latest" {
		t.Errorf("default image %v, want ghcr.io/shepherd-io/shepherd-controller-manager:latest", got)
	}
	// The webhook Service must select the controller manager's pods.
	svc := find(objs, "Service", Namespace, "shepherd-webhook")
	sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	labels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
	for k, v := range sel {
		if labels[k] != v {
			t.Errorf("the webhook Service selects %s=%s, the controller manager's pods have %v", k, v, labels)
		}
	}

	withImage := find(manifests(t, "registry.example.com:5000/shepherd@sha256:"+strings.Repeat("a", 64)), "Deployment", Namespace, Deployment)
	if got := images(withImage); len(got) != 1 || !strings.HasPrefix(got[0], "registry.example.com:5000/shepherd@sha256:") {
		t.Errorf("--image not applied: %v", got)
	}
	for _, bad := range []string{"Not An Image", "registry.example/UPPER:tag", "x:", "-v"} {
		if _, err := Manifests(bad); err == nil || !strings.Contains(err.Error(), `--image "`+bad+`" is not an image reference`) {
			t.Errorf("Manifests(%q): err = %v, want it to name --image", bad, err)
		}
	}
}

func TestToDelete(t *testing.T) {
	objs := manifests(t, "")
	for _, tc := range []struct {
		name                 string
		opts                 UninstallOptions
		wantCRDs, wantNSLast bool
	}{
		{name: "keeps the CRDs and the namespace"},
		{name: "--delete-crds", opts: UninstallOptions{DeleteCRDs: true}, wantCRDs: true},
		{name: "--delete-namespace", opts: UninstallOptions{DeleteNamespace: true}, wantNSLast: true},
		{name: "both", opts: UninstallOptions{DeleteCRDs: true, DeleteNamespace: true}, wantCRDs: true, wantNSLast: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			del, kept := ToDelete(objs, tc.opts)
			if len(del)+len(kept) != len(objs) {
				t.Fatalf("%d deleted + %d kept, want %d", len(del), len(kept), len(objs))
			}
			if k := del[0].GetKind(); k != "ValidatingWebhookConfiguration" {
				t.Errorf("first deleted: %s, want the webhook configuration (nothing waits on a webhook that is gone)", k)
			}
			var crds, guards int
			for i, o := range del {
				switch o.GetKind() {
				case "CustomResourceDefinition":
					crds++
				case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
					guards++
				case "Namespace":
					if i != len(del)-1 {
						t.Errorf("the namespace is deleted before %s", describe(del[i+1]))
					}
				}
			}
			if (guards > 0) != tc.wantCRDs {
				t.Errorf("deleted %d parts of the guard of agents' Works; want them to go with the CRDs (%v)", guards, tc.wantCRDs)
			}
			if (crds > 0) != tc.wantCRDs || (del[len(del)-1].GetKind() == "Namespace") != tc.wantNSLast {
				t.Errorf("deleted %d CRDs, namespace last %v; want CRDs %v, namespace %v", crds, del[len(del)-1].GetKind() == "Namespace", tc.wantCRDs, tc.wantNSLast)
			}
		})
	}
}

// TestUninstallRefusesWhileBindingsExist: nothing is deleted while bindings
// exist, unless forced.
func TestUninstallRefusesWhileBindingsExist(t *testing.T) {
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Deployment}}
	for _, tc := range []struct {
		name        string
		rbs, crbs   int
		force       bool
		wantRefused bool
	}{
		{name: "no bindings"},
		{name: "bindings", rbs: 2, crbs: 1, wantRefused: true},
		{name: "cluster bindings only", crbs: 3, wantRefused: true},
		{name: "bindings, forced", rbs: 2, crbs: 1, force: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := []client.Object{sa.DeepCopy()}
			for i := range tc.rbs {
				objs = append(objs, &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "rb" + string(rune('a'+i))}})
			}
			for i := range tc.crbs {
				objs = append(objs, &workv1alpha1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "crb" + string(rune('a'+i))}})
			}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
			var out strings.Builder
			err := Uninstall(ctx, c, manifests(t, ""), UninstallOptions{Force: tc.force, Out: &out})
			var refused *BindingsExistError
			if tc.wantRefused != errors.As(err, &refused) {
				t.Fatalf("err = %v, want refused %v", err, tc.wantRefused)
			}
			saErr := c.Get(ctx, client.ObjectKeyFromObject(sa), &corev1.ServiceAccount{})
			if tc.wantRefused {
				if refused.ResourceBindings != tc.rbs || refused.ClusterResourceBindings != tc.crbs {
					t.Errorf("counted %+v, want %d and %d", refused, tc.rbs, tc.crbs)
				}
				for _, want := range []string{"--force", "PropagationPolicies", "kubectl get resourcebindings,clusterresourcebindings -A"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q does not say %q", err, want)
					}
				}
				if saErr != nil {
					t.Errorf("refused, yet the ServiceAccount is gone: %v", saErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !apierrors.IsNotFound(saErr) {
				t.Errorf("the ServiceAccount is still there (%v); output:\n%s", saErr, out.String())
			}
			crds := 0
			for _, o := range manifests(t, "") {
				if o.GetKind() == "CustomResourceDefinition" {
					crds++
				}
			}
			if want := fmt.Sprintf("kept Namespace shepherd-system, %d CustomResourceDefinitions", crds); crds == 0 || !strings.Contains(out.String(), want) {
				t.Errorf("output does not say what was kept:\n%s", out.String())
			}
		})
	}
}
