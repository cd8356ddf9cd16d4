package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/dashboard/dashboardtest"
)

// TestRolloutSection: a workload with a Staged rollout shows its stages and
// each cluster's revision and health, with approve, pause and undo
// buttons (not in read-only mode); one without shows no rollout.
func TestRolloutSection(t *testing.T) {
	snap := dashboardtest.Fleet(12, 30)
	for _, b := range snap.Bindings {
		if b.Obj.GetName() != "app-00000-deployment" {
			continue
		}
		b.Obj.GetBindingSpec().Rollout = &policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutStaged}
		b.Obj.GetBindingStatus().Rollout = &workv1alpha1.RolloutStatus{
			Revision: "r2", LastGoodRevision: "r1", Phase: workv1alpha1.RolloutPhaseWaiting, Message: "Stage prod waits for approval",
			Stages: []workv1alpha1.RolloutStageStatus{{Name: "canary", StartedAt: &metav1.Time{}, CompletedAt: &metav1.Time{}}, {Name: "prod"}},
			Clusters: []workv1alpha1.ClusterRolloutStatus{
				{Name: "cluster-0000", Stage: "canary", Revision: "r2"},
				{Name: "cluster-0001", Stage: "prod", Revision: "r1", Failed: true},
			},
		}
		// Each cluster's copy reads as on the workloads page (State).
		b.Obj.GetBindingStatus().AggregatedStatus = []workv1alpha1.AggregatedStatusItem{
			{ClusterName: "cluster-0000", Applied: true, Health: policyv1alpha1.ResourceHealthy},
			{ClusterName: "cluster-0001", AppliedReason: "Conflict"},
		}
	}
	const page = "/workloads/ns/team-00/app-00000-deployment"
	ts, c := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: snap}})
	_, body := get(t, c, ts.URL+page)
	for _, want := range []string{"<h2>Rollout</h2>", "r2 (last good: r1)", "Stage prod waits for approval", "canary: done", "prod: pending",
		"<td>cluster-0000</td><td>canary</td><td>r2 (new)</td><td><span class=\"health healthy\">Healthy</span></td>",
		"r1 <strong>failed</strong></td><td><span class=\"health unhealthy\">Conflict</span></td>",
		`name="op" value="approve"`, `name="op" value="pause"`, `name="op" value="undo"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the workload page lacks %q", want)
		}
	}
	if _, other := get(t, c, ts.URL+"/workloads/ns/team-01/app-00001-deployment"); strings.Contains(other, "<h2>Rollout</h2>") {
		t.Error("a workload without a rollout shows one")
	}
	ro, rc := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: snap}, ReadOnly: true})
	if _, body := get(t, rc, ro.URL+page); !strings.Contains(body, "<h2>Rollout</h2>") || strings.Contains(body, `action="/actions/rollout"`) {
		t.Error("read-only: the rollout must show without its buttons")
	}

	// Bad forms are refused before the hub is asked.
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"op": {"promote"}, "binding": {page}}, "is not one of pause, resume, approve, undo"},
		{url.Values{"op": {"pause"}, "binding": {"/elsewhere"}}, "want /workloads/ns/NAMESPACE/NAME"},
	} {
		tc.form.Set("csrf", csrf(t, c, ts.URL))
		if code, body := post(t, c, ts.URL+"/actions/rollout", tc.form); code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("status %d, want 400 with %q:\n%.300s", code, tc.want, body)
		}
	}
}
