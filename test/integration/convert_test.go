package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/shepherd-io/shepherd/pkg/convert"
	"github.com/shepherd-io/shepherd/test/testenv"
)

const karmadaCorpus = "../../pkg/convert/testdata/karmada"

// ensureNamespace creates the corpus' namespace.
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	if _, err := hub.Apply(context.Background(), []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+name+"}\n")); err != nil {
		t.Fatal(err)
	}
}

// applyConverted applies converted objects: each must be accepted, but a
// customization still holding placeholders, which must be refused (by the
// schema's rules or the webhook, whichever sees a placeholder first).
func applyConverted(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		_, err := hub.ApplyObject(context.Background(), obj.DeepCopy())
		skeleton := strings.Contains(fmt.Sprint(obj.Object["spec"]), convert.Placeholder)
		switch {
		case skeleton && (!testenv.IsInvalid(err) || !strings.Contains(err.Error(), "spec.customizations")):
			t.Errorf("%s %s holds placeholders: want it refused naming them, got %v", obj.GetKind(), obj.GetName(), err)
		case !skeleton && err != nil:
			t.Errorf("%s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
}

// TestConvertedCorpusApplies: what shepherd convert writes for the Karmada
// corpus is accepted by the hub's API server and webhooks, the skeleton
// of a Lua customization excepted, which they refuse until written.
func TestConvertedCorpusApplies(t *testing.T) {
	suite.Hub(t)
	ensureNamespace(t, "shop")
	docs, errs := convert.ReadPaths([]string{karmadaCorpus}, false, nil)
	objs, report := convert.Convert(docs, errs...)
	if len(objs) != len(docs) || report.Converted < 10 {
		t.Fatalf("converted %d of %d documents: %+v", len(objs), len(docs), report.Entries)
	}
	applyConverted(t, objs)
}

// karmadaCRD is a CRD serving one of Karmada's kinds, its schema left open:
// enough for a control plane to list from.
func karmadaCRD(group, kind, plural, scope string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[3]s.%[1]s}
spec:
  group: %[1]s
  scope: %[4]s
  names: {kind: %[2]s, listKind: %[2]sList, plural: %[3]s, singular: %[5]s}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, kind, plural, scope, strings.ToLower(kind))
}

// TestConvertFromLiveControlPlane: a real API server serving Karmada's
// kinds is listed, never changed, and what it holds converts into objects
// the hub accepts.
func TestConvertFromLiveControlPlane(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	ensureNamespace(t, "shop")
	for _, r := range convert.KarmadaResources {
		kind, scope := map[string]string{
			"propagationpolicies": "PropagationPolicy", "clusterpropagationpolicies": "ClusterPropagationPolicy",
			"overridepolicies": "OverridePolicy", "clusteroverridepolicies": "ClusterOverridePolicy",
			"resourceinterpretercustomizations": "ResourceInterpreterCustomization",
			"federatedhpas":                     "FederatedHPA", "cronfederatedhpas": "CronFederatedHPA",
		}[r.Resource], "Namespaced"
		if kind == "" {
			t.Fatalf("no kind known for Karmada's %s: add it to this test", r.Resource)
		}
		if strings.HasPrefix(kind, "Cluster") || kind == "ResourceInterpreterCustomization" {
			scope = "Cluster"
		}
		if _, err := hub.Apply(ctx, []byte(karmadaCRD(r.Group, kind, r.Resource, scope))); err != nil {
			t.Fatal(err)
		}
	}
	docs, errs := convert.ReadPaths([]string{filepath.Join(karmadaCorpus, "propagation.yaml"), filepath.Join(karmadaCorpus, "overrides.yaml")}, false, nil)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var stored []*unstructured.Unstructured
	for _, d := range docs {
		obj := &unstructured.Unstructured{Object: d.Object}
		var applied *unstructured.Unstructured
		var err error
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if applied, err = hub.ApplyObject(ctx, obj.DeepCopy()); !meta.IsNoMatchError(err) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatalf("storing the Karmada object %s: %v", obj.GetName(), err)
		}
		stored = append(stored, applied)
	}

	l, err := convert.NewLister(hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	live, errs := convert.ReadLive(ctx, l)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	objs, report := convert.Convert(live)
	if len(objs) != len(stored) || report.Incomplete() {
		t.Fatalf("converted %d of %d: %+v", len(objs), len(stored), report.Entries)
	}
	for _, e := range report.Entries {
		if e.Source != convert.LiveSource {
			t.Errorf("entry from %q", e.Source)
		}
	}
	// Nothing listed was changed.
	for _, before := range stored {
		ri, err := hub.Resource(before)
		if err != nil {
			t.Fatal(err)
		}
		after, err := ri.Get(ctx, before.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.GetResourceVersion() != before.GetResourceVersion() {
			t.Errorf("%s %s changed while converting", before.GetKind(), before.GetName())
		}
	}
	applyConverted(t, objs)
}
