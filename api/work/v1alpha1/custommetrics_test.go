package v1alpha1

import (
	"reflect"
	"strings"
	"testing"
)

// TestCustomMetricsAnnotation: the metrics a Work asks its agent for
// survive the annotation in their order, and an annotation the agent
// cannot use is refused with what is wrong.
func TestCustomMetricsAnnotation(t *testing.T) {
	reqs := []CustomMetricRequest{
		{Name: "http_requests", Selector: "verb=GET"},
		{Name: "rps", Object: &CustomMetricObject{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"}},
	}
	got, err := ParseCustomMetrics(FormatCustomMetrics(reqs))
	if err != nil || !reflect.DeepEqual(got, reqs) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if FormatCustomMetrics(nil) != "" {
		t.Fatal("no metrics, no annotation")
	}
	if got, err := ParseCustomMetrics(""); got != nil || err != nil {
		t.Fatalf("empty: %v, %v", got, err)
	}
	if s := reqs[0].String() + "; " + reqs[1].String(); s != "pods metric http_requests {verb=GET}; object metric rps of Ingress main" {
		t.Errorf("names %q", s)
	}
	for _, tc := range []struct{ in, want string }{
		{`rps`, "is not a JSON list of metrics"},
		{`{"name":"rps"}`, "is not a JSON list of metrics"},
		{`[{"selector":"a=b"}]`, "metric 0 has no name"},
		{`[{"name":"rps","object":{"kind":"Ingress","name":"main"}}]`, "the object of metric rps needs an apiVersion, a kind and a name"},
		{`[` + strings.Repeat(`{"name":"a"},`, MaxCustomMetrics) + `{"name":"b"}]`, "asks for 17 metrics, at most 16"},
	} {
		if _, err := ParseCustomMetrics(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}
