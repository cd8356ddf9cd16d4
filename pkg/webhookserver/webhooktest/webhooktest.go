// Package webhooktest checks the deployable webhook manifests under config/
// against the configurations the code writes in-process.
package webhooktest

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/shepherd-io/shepherd/pkg/webhookserver"
)

// CheckManifest fails t unless the YAML file holds a webhook configuration
// of C's kind equal to what build returns for the manifest's own client
// config, and that client config calls a Service at path: the manifest
// and the in-process configuration then differ only in how the webhook is
// reached.
func CheckManifest[C webhookserver.Configuration](t testing.TB, file, path string, empty C, build func(admissionregistrationv1.WebhookClientConfig) C) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	kind := build(admissionregistrationv1.WebhookClientConfig{}).GetObjectKind().GroupVersionKind().Kind
	var manifest C
	found := false
	for doc := range bytes.SplitSeq(data, []byte("\n---\n")) {
		obj := empty.DeepCopyObject().(C)
		if err := yaml.UnmarshalStrict(doc, obj); err == nil && obj.GetObjectKind().GroupVersionKind().Kind == kind {
			manifest, found = obj, true
		}
	}
	if !found {
		t.Fatalf("no %s in %s", kind, file)
	}
	ccs := webhookserver.ClientConfigs(manifest)
	if len(ccs) == 0 {
		t.Fatalf("%s in %s has no webhook", kind, file)
	}
	want := build(*ccs[0])
	if !reflect.DeepEqual(manifest, want) {
		got, _ := yaml.Marshal(manifest)
		w, _ := yaml.Marshal(want)
		t.Errorf("%s differs from the in-process configuration:\n%s\nwant:\n%s", file, got, w)
	}
	if svc := ccs[0].Service; svc == nil || ptr.Deref(svc.Path, "") != path {
		t.Errorf("%s must call a Service at %s", file, path)
	}
}
