package dashboard

import (
	"context"
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/actions"
)

// RolloutView is a workload's Progressive or Staged rollout: the stages
// and each cluster's revision and health.
type RolloutView struct {
	Type     policyv1alpha1.RolloutType
	Revision string
	LastGood string
	Phase    workv1alpha1.RolloutPhase
	Message  string
	Paused   bool
	Stages   []workv1alpha1.RolloutStageStatus
	Clusters []RolloutCluster
}

// RolloutCluster is one cluster's part in a rollout.
type RolloutCluster struct {
	Name     string
	Stage    string
	Revision string
	// New: it runs the revision going out.
	New    bool
	Failed bool
	// State is the copy's state (AggregatedStatusItem.State), as on the
	// workloads page; empty before the member reported.
	State string
}

// buildRollout is b's rollout view; nil without a gated rollout.
func buildRollout(b Binding) *RolloutView {
	spec, status := b.Obj.GetBindingSpec(), b.Obj.GetBindingStatus()
	if !spec.Rollout.Gated() {
		return nil
	}
	v := &RolloutView{Type: spec.Rollout.Type, Paused: spec.RolloutControl != nil && spec.RolloutControl.Paused}
	st := status.Rollout
	if st == nil {
		return v
	}
	v.Revision, v.LastGood, v.Phase, v.Message, v.Stages = st.Revision, st.LastGoodRevision, st.Phase, st.Message, st.Stages
	state := map[string]string{}
	for i := range status.AggregatedStatus {
		state[status.AggregatedStatus[i].ClusterName] = status.AggregatedStatus[i].State()
	}
	for _, c := range st.Clusters {
		v.Clusters = append(v.Clusters, RolloutCluster{Name: c.Name, Stage: c.Stage, Revision: c.Revision,
			New: c.Revision == st.Revision, Failed: c.Failed, State: state[c.Name]})
	}
	return v
}

// rollout pauses, resumes, approves or undoes a workload's rollout (form
// fields binding, op, and stage for approve), acting as the user.
func (s *Server) rollout(ctx context.Context, c client.Client, r *http.Request, _ *Snapshot) (string, error) {
	op := r.PostFormValue("op")
	switch op {
	case "pause", "resume", "approve", "undo":
	default:
		return "", badRequest(fmt.Sprintf("op: %q is not one of pause, resume, approve, undo", op))
	}
	ref, err := ParseRefPath(r.PostFormValue("binding"))
	if err != nil {
		return "", err
	}
	key := actions.BindingKey{Cluster: ref.Cluster, Namespace: ref.Namespace, Name: ref.Name}
	switch op {
	case "pause", "resume":
		if err := actions.PauseRollout(ctx, c, key, op == "pause", fieldOwner); err != nil {
			return "", err
		}
		return fmt.Sprintf("The rollout of %s is %sd.", ref, map[string]string{"pause": "pause", "resume": "resume"}[op]), nil
	case "approve":
		stage, when, err := actions.ApproveRollout(ctx, c, key, r.PostFormValue("stage"), fieldOwner)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Approved stage %s (%s) of the rollout of %s.", stage, when, ref), nil
	}
	rev, err := actions.UndoRollout(ctx, c, key, fieldOwner)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Undid revision %s of %s: its clusters go back to the last good revision.", rev, ref), nil
}
