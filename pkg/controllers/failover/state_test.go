package failover

import (
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func rules(pairs ...string) *policyv1alpha1.StatePreservation {
	sp := &policyv1alpha1.StatePreservation{}
	for i := 0; i+1 < len(pairs); i += 2 {
		sp.Rules = append(sp.Rules, policyv1alpha1.StatePreservationRule{AliasLabelName: pairs[i], JSONPath: pairs[i+1]})
	}
	return sp
}

func TestPreservedLabels(t *testing.T) {
	status := `{"checkpoint":"ckpt-42","replicas":1000000,"ready":true,"list":["a","b"],"text":"has spaces"}`
	cases := []struct {
		name    string
		sp      *policyv1alpha1.StatePreservation
		status  string
		want    map[string]string
		wantErr string
	}{
		{name: "no rules", sp: nil, status: status, want: nil},
		{name: "string", sp: rules("app/checkpoint", "{.checkpoint}"), status: status, want: map[string]string{"app/checkpoint": "ckpt-42"}},
		{name: "blanks inside the braces, as Karmada writes them", sp: rules("c", "{ .checkpoint }"), status: status, want: map[string]string{"c": "ckpt-42"}},
		{name: "number keeps its digits", sp: rules("replicas", "{.replicas}"), status: status, want: map[string]string{"replicas": "1000000"}},
		{name: "bool", sp: rules("ready", "{.ready}"), status: status, want: map[string]string{"ready": "true"}},
		{name: "missing field is reported, others kept", sp: rules("a", "{.checkpoint}", "b", "{.nothere}"), status: status,
			want: map[string]string{"a": "ckpt-42"}, wantErr: "rule b ({.nothere})"},
		{name: "several values", sp: rules("l", "{.list[*]}"), status: status, want: map[string]string{}, wantErr: "finds 2 values"},
		{name: "invalid label value", sp: rules("t", "{.text}"), status: status, want: map[string]string{}, wantErr: "not a valid label value"},
		{name: "no status", sp: rules("a", "{.checkpoint}"), status: "", want: nil, wantErr: "no collected status"},
		{name: "bad path", sp: rules("a", "{.checkpoint"), status: status, want: map[string]string{}, wantErr: "invalid JSONPath"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := preservedLabels(tc.sp, []byte(tc.status))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("labels %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEvictRecordsPreservedState: the history entry of an eviction with
// state preservation holds the labels and the targets before the
// eviction, stored in the binding's spec (so a restart loses nothing).
func TestEvictRecordsPreservedState(t *testing.T) {
	spec := appSpec(policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeDirectly})
	status := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{
		{ClusterName: "m1", Status: &runtime.RawExtension{Raw: []byte(`{"checkpoint":"c7"}`)}},
	}}
	errs := evict(spec, status, []eviction{{cluster: "m1", purge: policyv1alpha1.PurgeDirectly, state: rules("checkpoint", "{.checkpoint}")}}, metav1.NewTime(t0))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	h := spec.EvictionHistory[0]
	if h.PreservedLabelState["checkpoint"] != "c7" || strings.Join(h.ClustersBeforeFailover, ",") != "m1,m2" {
		t.Fatalf("history entry %+v", h)
	}

	// A graceful purge keeps both copies for a while: no state is carried.
	spec = appSpec(policyv1alpha1.ApplicationFailoverBehavior{})
	evict(spec, status, []eviction{{cluster: "m1", purge: policyv1alpha1.PurgeGracefully, state: rules("checkpoint", "{.checkpoint}")}}, metav1.NewTime(t0))
	if spec.EvictionHistory[0].PreservedLabelState != nil {
		t.Fatalf("state carried with a graceful purge: %+v", spec.EvictionHistory[0])
	}

	// A rule that reads nothing: the eviction still happens, the error is returned.
	spec = appSpec(policyv1alpha1.ApplicationFailoverBehavior{})
	errs = evict(spec, &workv1alpha1.BindingStatus{}, []eviction{{cluster: "m1", purge: policyv1alpha1.PurgeDirectly, state: rules("checkpoint", "{.checkpoint}")}}, metav1.NewTime(t0))
	if len(errs) != 1 || spec.Clusters[0].State != workv1alpha1.TargetUnscheduled || spec.EvictionHistory[0].PreservedLabelState != nil {
		t.Fatalf("errs %v targets %+v history %+v", errs, spec.Clusters, spec.EvictionHistory)
	}
}
