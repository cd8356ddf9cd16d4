package rollout

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(sec int) *metav1.Time { return &metav1.Time{Time: t0.Add(time.Duration(sec) * time.Second)} }

// on is a cluster whose Work holds rev.
func on(name, rev string, ready bool, stages ...int) Cluster {
	return Cluster{Name: name, HasWork: true, Revision: rev, Ready: ready, Stages: stages}
}

// was is a cluster's prior status: rev since updated, healthy since healthy (-1: not).
func was(name, rev string, updated, healthy int, failed bool) workv1alpha1.ClusterRolloutStatus {
	c := workv1alpha1.ClusterRolloutStatus{Name: name, Revision: rev, UpdatedAt: at(updated), Failed: failed}
	if healthy >= 0 {
		c.HealthySince = at(healthy)
	}
	return c
}

func progressive(maxConc intstr.IntOrString, minSuccess int32) *policyv1alpha1.RolloutStrategy {
	return &policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutProgressive, MaxConcurrency: &maxConc,
		MinSuccessSeconds: minSuccess, ProgressDeadlineSeconds: ptr.To[int32](100)}
}

func staged(stages ...policyv1alpha1.RolloutStage) *policyv1alpha1.RolloutStrategy {
	return &policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutStaged, Stages: stages, ProgressDeadlineSeconds: ptr.To[int32](100)}
}

func stage(name string, approval policyv1alpha1.ApprovalMode, wait int32) policyv1alpha1.RolloutStage {
	return policyv1alpha1.RolloutStage{Name: name, Approval: approval, WaitSeconds: wait}
}

func prior(rev, good string, clusters ...workv1alpha1.ClusterRolloutStatus) *workv1alpha1.RolloutStatus {
	return &workv1alpha1.RolloutStatus{Revision: rev, LastGoodRevision: good, StartedAt: at(0), Clusters: clusters}
}

func sends(s ...string) []Send {
	var out []Send
	for _, x := range s {
		c, r, _ := strings.Cut(x, "=")
		out = append(out, Send{Cluster: c, Revision: r})
	}
	return out
}

// TestStampsRoundUp: the status records whole seconds, rounded up, so a
// cluster that turned healthy late in a second is done no sooner than
// minSuccessSeconds after it really turned healthy.
func TestStampsRoundUp(t *testing.T) {
	s := progressive(intstr.FromInt32(1), 3)
	healthyAt := t0.Add(900 * time.Millisecond)
	d := Decide(Input{Strategy: s, Target: "b", Now: healthyAt, Prior: prior("b", "a", was("m1", "b", 0, -1, false), was("m2", "a", 0, 0, false)),
		Clusters: []Cluster{on("m1", "b", true), on("m2", "a", true)}})
	if got := d.Status.Clusters[0].HealthySince; got == nil || !got.Equal(at(1)) {
		t.Fatalf("healthy since %v, want %v (rounded up)", got, at(1))
	}
	if d.RequeueAfter != 3100*time.Millisecond {
		t.Errorf("requeue after %s, want 3.1s (the stamp plus minSuccessSeconds)", d.RequeueAfter)
	}
	for _, tc := range []struct {
		after time.Duration // since healthyAt
		done  bool
	}{{2900 * time.Millisecond, false}, {3 * time.Second, false}, {3100 * time.Millisecond, true}} {
		next := Decide(Input{Strategy: s, Target: "b", Now: healthyAt.Add(tc.after), Prior: &d.Status,
			Clusters: []Cluster{on("m1", "b", true), on("m2", "a", true)}})
		if sent := len(next.Send) > 0; sent != tc.done {
			t.Errorf("%s after turning healthy: m2 sent %v, want %v", tc.after, sent, tc.done)
		}
	}
	if got := stampOf(t0); !got.Equal(t0) {
		t.Errorf("a whole second %v was stamped %v", t0, got)
	}
}

func TestDecide(t *testing.T) {
	oldAll := prior("b", "a", was("m1", "b", 0, -1, false), was("m2", "a", 0, 0, false), was("m3", "a", 0, 0, false))
	cases := []struct {
		name      string
		in        Input
		want      []Send
		phase     workv1alpha1.RolloutPhase
		good      string
		msg       string // substring of the message
		requeue   time.Duration
		condition string // the condition that must be True
	}{
		{
			name:  "first revision goes everywhere at once",
			in:    Input{Strategy: progressive(intstr.FromInt32(1), 0), Target: "a", Clusters: []Cluster{{Name: "m2"}, {Name: "m1"}}},
			want:  sends("m1=a", "m2=a"),
			phase: workv1alpha1.RolloutPhaseProgressing, condition: workv1alpha1.ConditionRolloutProgressing,
		},
		{
			// A status lost to a stale write (no prior revision) does not
			// make a change the binding's first: the clusters run another.
			name:  "a change with its status lost still goes one cluster at a time",
			in:    Input{Strategy: progressive(intstr.FromInt32(1), 30), Target: "b", Prior: nil, Clusters: []Cluster{on("m2", "a", true), on("m1", "a", true)}},
			want:  sends("m1=b"),
			phase: workv1alpha1.RolloutPhaseProgressing, requeue: 100 * time.Second,
		},
		{
			// Nothing is good yet: a cluster placed after the first
			// revision went out gets it at once too, not one at a time.
			name:  "a cluster placed while the first revision goes out gets it at once",
			in:    Input{Strategy: progressive(intstr.FromInt32(1), 30), Target: "a", Prior: prior("a", "", was("m1", "a", 0, -1, false)), Clusters: []Cluster{on("m1", "a", false), {Name: "m2"}, {Name: "m3"}}},
			want:  sends("m2=a", "m3=a"),
			phase: workv1alpha1.RolloutPhaseProgressing, condition: workv1alpha1.ConditionRolloutProgressing,
		},
		{
			name:  "a change goes to one cluster first, by name",
			in:    Input{Strategy: progressive(intstr.FromInt32(1), 30), Target: "b", Prior: prior("a", "a"), Clusters: []Cluster{on("m3", "a", true), on("m1", "a", true), on("m2", "a", true)}},
			want:  sends("m1=b"),
			phase: workv1alpha1.RolloutPhaseProgressing, good: "a", requeue: 100 * time.Second,
		},
		{
			name: "a cluster healthy for less than minSuccessSeconds holds the next",
			in: Input{Strategy: progressive(intstr.FromInt32(1), 30), Target: "b", Now: t0.Add(20 * time.Second),
				Prior:    prior("b", "a", was("m1", "b", 0, 10, false), was("m2", "a", 0, 0, false)),
				Clusters: []Cluster{on("m1", "b", true), on("m2", "a", true)}},
			phase: workv1alpha1.RolloutPhaseProgressing, good: "a", requeue: 20 * time.Second,
		},
		{
			name: "healthy for minSuccessSeconds: the next cluster goes",
			in: Input{Strategy: progressive(intstr.FromInt32(1), 30), Target: "b", Now: t0.Add(40 * time.Second),
				Prior:    prior("b", "a", was("m1", "b", 0, 10, false), was("m2", "a", 0, 0, false)),
				Clusters: []Cluster{on("m1", "b", true), on("m2", "a", true)}},
			want: sends("m2=b"), phase: workv1alpha1.RolloutPhaseProgressing, good: "a",
		},
		{
			name: "a percentage of the clusters at once, rounded down",
			in: Input{Strategy: progressive(intstr.FromString("50%"), 0), Target: "b", Prior: prior("a", "a"),
				Clusters: []Cluster{on("m1", "a", true), on("m2", "a", true), on("m3", "a", true), on("m4", "a", true), on("m5", "a", true)}},
			want: sends("m1=b", "m2=b"), phase: workv1alpha1.RolloutPhaseProgressing, good: "a",
		},
		{
			name: "a cluster past its deadline stops the rollout (maxFailures 0)",
			in: Input{Strategy: progressive(intstr.FromInt32(1), 0), Target: "b", Now: t0.Add(101 * time.Second), Prior: oldAll,
				Clusters: []Cluster{on("m1", "b", false), on("m2", "a", true), on("m3", "a", true)}},
			phase: workv1alpha1.RolloutPhaseFailed, good: "a", msg: "1 clusters failed (maxFailures 0): m1", condition: workv1alpha1.ConditionRolloutFailed,
		},
		{
			name: "with rollbackOnFailure the failed cluster gets the last good revision back, the others stay",
			in: Input{Strategy: withRollback(progressive(intstr.FromInt32(1), 0)), Target: "b", Now: t0.Add(101 * time.Second), Prior: oldAll,
				Clusters: []Cluster{on("m1", "b", false), on("m2", "a", true), on("m3", "a", true)}},
			want: sends("m1=a"), phase: workv1alpha1.RolloutPhaseFailed, good: "a", msg: "Rolled back to revision a",
		},
		{
			name: "rolled back, the failure stays: nothing more goes out",
			in: Input{Strategy: withRollback(progressive(intstr.FromInt32(1), 0)), Target: "b", Now: t0.Add(200 * time.Second),
				Prior:    prior("b", "a", was("m1", "a", 101, 101, true), was("m2", "a", 0, 0, false)),
				Clusters: []Cluster{on("m1", "a", true), on("m2", "a", true)}},
			phase: workv1alpha1.RolloutPhaseFailed, good: "a",
		},
		{
			// The binding controller records a rollback before it writes
			// the Works: stopped in between, it finds the failure recorded
			// and the Work still on the target.
			name: "a recorded rollback whose Work still holds the target is done again",
			in: Input{Strategy: withRollback(progressive(intstr.FromInt32(1), 0)), Target: "b", Now: t0.Add(200 * time.Second),
				Prior:    prior("b", "a", was("m1", "a", 101, -1, true), was("m2", "a", 0, 0, false)),
				Clusters: []Cluster{on("m1", "b", false), on("m2", "a", true)}},
			want: sends("m1=a"), phase: workv1alpha1.RolloutPhaseFailed, good: "a", msg: "Rolled back to revision a",
		},
		{
			name: "rollbackOnFailure without a good revision: said in the status, nothing rolled back",
			in: Input{Strategy: withRollback(progressive(intstr.FromInt32(1), 0)), Target: "b", Now: t0.Add(101 * time.Second),
				Prior:    prior("b", "", was("m1", "b", 0, -1, false), was("m2", "a", 0, -1, false)),
				Clusters: []Cluster{on("m1", "b", false), on("m2", "a", false)}},
			phase: workv1alpha1.RolloutPhaseFailed, msg: "no previous good revision", condition: workv1alpha1.ConditionRolloutFailed,
		},
		{
			name: "maxFailures 1 lets the rollout go on past one failure",
			in: Input{Strategy: withFailures(progressive(intstr.FromInt32(1), 0), 1), Target: "b", Now: t0.Add(101 * time.Second), Prior: oldAll,
				Clusters: []Cluster{on("m1", "b", false), on("m2", "a", true), on("m3", "a", true)}},
			want: sends("m2=b"), phase: workv1alpha1.RolloutPhaseProgressing, good: "a",
		},
		{
			name: "a cluster joining mid-way gets the last good revision",
			in: Input{Strategy: progressive(intstr.FromInt32(1), 0), Target: "b", Prior: prior("b", "a", was("m1", "b", 0, -1, false)),
				Clusters: []Cluster{on("m1", "b", false), {Name: "m9"}}},
			want: sends("m9=a"), phase: workv1alpha1.RolloutPhaseProgressing, good: "a",
		},
		{
			name: "paused: nothing new goes out",
			in: Input{Strategy: progressive(intstr.FromInt32(1), 0), Target: "b", Prior: prior("a", "a"), Control: &workv1alpha1.RolloutControl{Paused: true},
				Clusters: []Cluster{on("m1", "a", true)}},
			phase: workv1alpha1.RolloutPhasePaused, good: "a", condition: workv1alpha1.ConditionRolloutPaused,
		},
		{
			name: "every cluster done: complete, the target is the last good revision",
			in: Input{Strategy: progressive(intstr.FromInt32(1), 0), Target: "b", Prior: prior("b", "a", was("m1", "b", 0, 0, false)),
				Clusters: []Cluster{on("m1", "b", true)}},
			phase: workv1alpha1.RolloutPhaseComplete, good: "b", condition: workv1alpha1.ConditionRolloutComplete,
		},
		{
			name: "undo: clusters on the target get the last good revision back",
			in: Input{Strategy: progressive(intstr.FromInt32(1), 0), Target: "b", Prior: prior("b", "a", was("m1", "b", 0, 0, false), was("m2", "a", 0, 0, false)),
				Control: &workv1alpha1.RolloutControl{UndoRevision: "b"}, Clusters: []Cluster{on("m1", "b", true), on("m2", "a", true)}},
			want: sends("m1=a"), phase: workv1alpha1.RolloutPhaseRolledBack, good: "a",
		},
		{
			name: "staged: a stage waiting for approval sends nothing",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalBefore, 0), stage("prod", policyv1alpha1.ApprovalNone, 0)), Target: "b", Prior: prior("a", "a"),
				Clusters: []Cluster{on("m1", "a", true, 1), on("m2", "a", true, 0)}},
			phase: workv1alpha1.RolloutPhaseWaiting, good: "a", msg: "Stage canary waits for approval", condition: workv1alpha1.ConditionRolloutProgressing,
		},
		{
			name: "staged: approved, the stage's clusters go at once",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalBefore, 0), stage("prod", policyv1alpha1.ApprovalNone, 0)), Target: "b", Prior: prior("a", "a"),
				Control:  &workv1alpha1.RolloutControl{Approvals: []workv1alpha1.RolloutApproval{{Revision: "b", Stage: "canary", When: policyv1alpha1.ApprovalBefore}}},
				Clusters: []Cluster{on("m1", "a", true, 1), on("m2", "a", true, 0), on("m3", "a", true, 0)}},
			want: sends("m2=b", "m3=b"), phase: workv1alpha1.RolloutPhaseProgressing, good: "a",
		},
		{
			name: "staged: an approval of another revision does not count",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalBefore, 0)), Target: "b", Prior: prior("a", "a"),
				Control:  &workv1alpha1.RolloutControl{Approvals: []workv1alpha1.RolloutApproval{{Revision: "a", Stage: "canary", When: policyv1alpha1.ApprovalBefore}}},
				Clusters: []Cluster{on("m1", "a", true, 0)}},
			phase: workv1alpha1.RolloutPhaseWaiting, good: "a",
		},
		{
			name: "staged: the next stage waits for the stage before's waitSeconds",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalNone, 60), stage("prod", policyv1alpha1.ApprovalNone, 0)), Target: "b", Now: t0.Add(10 * time.Second),
				Prior:    &workv1alpha1.RolloutStatus{Revision: "b", LastGoodRevision: "a", Clusters: []workv1alpha1.ClusterRolloutStatus{was("m1", "b", 0, 0, false)}, Stages: []workv1alpha1.RolloutStageStatus{{Name: "canary", StartedAt: at(0), CompletedAt: at(5)}}},
				Clusters: []Cluster{on("m1", "b", true, 0), on("m2", "a", true, 1)}},
			phase: workv1alpha1.RolloutPhaseWaiting, good: "a", requeue: 55 * time.Second, msg: "starts after its waitSeconds",
		},
		{
			name: "staged: After approval holds the next stage once the stage is done",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalAfter, 0), stage("prod", policyv1alpha1.ApprovalNone, 0)), Target: "b", Now: t0.Add(10 * time.Second),
				Prior:    prior("b", "a", was("m1", "b", 0, 0, false)),
				Clusters: []Cluster{on("m1", "b", true, 0), on("m2", "a", true, 1)}},
			phase: workv1alpha1.RolloutPhaseWaiting, good: "a", msg: "Stage canary is done and waits for approval",
		},
		{
			name: "staged: clusters no stage selects go after the last stage",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalNone, 0)), Target: "b", Prior: prior("a", "a"),
				Clusters: []Cluster{on("m1", "a", true), on("m2", "a", true, 0)}},
			want: sends("m2=b"), phase: workv1alpha1.RolloutPhaseProgressing, good: "a",
		},
		{
			// The canary lost its clusters (failed over, relabelled): its
			// gate still holds the production stage.
			name: "staged: a stage without clusters still waits for its approval",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalBefore, 0), stage("prod", policyv1alpha1.ApprovalNone, 0)), Target: "b", Prior: prior("a", "a"),
				Clusters: []Cluster{on("m2", "a", true, 1), on("m3", "a", true, 1)}},
			phase: workv1alpha1.RolloutPhaseWaiting, good: "a", msg: "Stage canary waits for approval", condition: workv1alpha1.ConditionRolloutProgressing,
		},
		{
			name: "staged: a stage without clusters holds the next stage for its After approval",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalAfter, 0), stage("prod", policyv1alpha1.ApprovalNone, 0)), Target: "b", Prior: prior("a", "a"),
				Clusters: []Cluster{on("m2", "a", true, 1)}},
			phase: workv1alpha1.RolloutPhaseWaiting, good: "a", msg: "Stage canary is done and waits for approval",
		},
		{
			name: "staged: approved, the stage after a stage without clusters goes",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalBefore, 0), stage("prod", policyv1alpha1.ApprovalNone, 0)), Target: "b", Prior: prior("a", "a"),
				Control:  &workv1alpha1.RolloutControl{Approvals: []workv1alpha1.RolloutApproval{{Revision: "b", Stage: "canary", When: policyv1alpha1.ApprovalBefore}}},
				Clusters: []Cluster{on("m2", "a", true, 1), on("m3", "a", true, 1)}},
			want: sends("m2=b", "m3=b"), phase: workv1alpha1.RolloutPhaseProgressing, good: "a",
		},
		{
			name: "staged: two stages selecting one cluster stop the rollout, naming both",
			in: Input{Strategy: staged(stage("canary", policyv1alpha1.ApprovalNone, 0), stage("prod", policyv1alpha1.ApprovalNone, 0)), Target: "b", Prior: prior("a", "a"),
				Clusters: []Cluster{on("m1", "a", true, 0, 1)}},
			phase: workv1alpha1.RolloutPhaseFailed, good: "a", msg: "cluster m1 is selected by stages canary, prod", condition: workv1alpha1.ConditionRolloutFailed,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.Now.IsZero() {
				tc.in.Now = t0
			}
			d := Decide(tc.in)
			if !reflect.DeepEqual(d.Send, tc.want) {
				t.Errorf("send = %v, want %v", d.Send, tc.want)
			}
			if d.Status.Phase != tc.phase {
				t.Errorf("phase = %s, want %s (%s)", d.Status.Phase, tc.phase, d.Status.Message)
			}
			if d.Status.LastGoodRevision != tc.good {
				t.Errorf("last good = %q, want %q", d.Status.LastGoodRevision, tc.good)
			}
			if !strings.Contains(d.Status.Message, tc.msg) {
				t.Errorf("message %q does not say %q", d.Status.Message, tc.msg)
			}
			if tc.requeue != 0 && d.RequeueAfter != tc.requeue {
				t.Errorf("requeue after %v, want %v", d.RequeueAfter, tc.requeue)
			}
			if tc.condition != "" {
				for _, c := range d.Conditions {
					if (c.Type == tc.condition) != (c.Status == metav1.ConditionTrue) {
						t.Errorf("condition %s is %s; want only %s True", c.Type, c.Status, tc.condition)
					}
				}
			}
		})
	}
}

func withRollback(s *policyv1alpha1.RolloutStrategy) *policyv1alpha1.RolloutStrategy {
	s.RollbackOnFailure = true
	return s
}

func withFailures(s *policyv1alpha1.RolloutStrategy, n int32) *policyv1alpha1.RolloutStrategy {
	s.MaxFailures = ptr.To(intstr.FromInt32(n))
	return s
}

// TestDecideRestartCarriesOn: a decision fed its own status (a controller
// restarted with only what the API holds) sends nothing twice and keeps
// its clocks.
func TestDecideRestartCarriesOn(t *testing.T) {
	in := Input{Strategy: progressive(intstr.FromInt32(1), 30), Target: "b", Prior: prior("a", "a"),
		Clusters: []Cluster{on("m1", "a", true), on("m2", "a", true)}, Now: t0}
	first := Decide(in)
	if !reflect.DeepEqual(first.Send, sends("m1=b")) {
		t.Fatalf("first send = %v", first.Send)
	}
	// Restarted 10 s later: m1 has the revision and is ready since then.
	in.Prior, in.Now = &first.Status, t0.Add(10*time.Second)
	in.Clusters = []Cluster{on("m1", "b", true), on("m2", "a", true)}
	second := Decide(in)
	if len(second.Send) != 0 || second.Status.Clusters[0].UpdatedAt.Time != t0 {
		t.Fatalf("after restart: send %v, m1 updated at %v (want %v)", second.Send, second.Status.Clusters[0].UpdatedAt, t0)
	}
	in.Prior, in.Now = &second.Status, t0.Add(41*time.Second)
	if third := Decide(in); !reflect.DeepEqual(third.Send, sends("m2=b")) {
		t.Fatalf("after minSuccessSeconds from when m1 was first seen ready: send %v", third.Send)
	}
}

// TestCompleteIsAFixedPoint: a Complete rollout decided again later, with
// nothing changed (a restarted controller manager decides every binding
// again), is decided the same: nothing sent, the status unchanged, so
// nothing is written. A first revision went everywhere at once and keeps
// no stages; a staged change keeps the stages as they ran.
func TestCompleteIsAFixedPoint(t *testing.T) {
	stages := staged(stage("canary", policyv1alpha1.ApprovalNone, 0), stage("rest", policyv1alpha1.ApprovalNone, 0))
	for _, tc := range []struct {
		name     string
		strategy *policyv1alpha1.RolloutStrategy
		prior    *workv1alpha1.RolloutStatus
		clusters []Cluster
	}{
		{"a first revision, staged", stages, nil, []Cluster{on("m1", "a", true, 0), on("m2", "a", true, 1), on("m3", "a", true)}},
		{"a first revision, progressive", progressive(intstr.FromInt32(1), 0), nil, []Cluster{on("m1", "a", true), on("m2", "a", true)}},
		{"a staged change", stages, prior("a", "a", was("m1", "a", 0, 0, false), was("m2", "a", 0, 0, false)),
			[]Cluster{on("m1", "b", true, 0), on("m2", "b", true, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := "a"
			if tc.prior != nil {
				target = "b"
			}
			in := Input{Strategy: tc.strategy, Target: target, Prior: tc.prior, Clusters: tc.clusters, Now: t0.Add(500 * time.Second)}
			d := Decide(in)
			for i := 0; d.Status.Phase != workv1alpha1.RolloutPhaseComplete && i < 10; i++ {
				// A staged change completes one stage a second.
				in.Prior, in.Now = &d.Status, in.Now.Add(time.Second)
				d = Decide(in)
			}
			if d.Status.Phase != workv1alpha1.RolloutPhaseComplete || len(d.Send) != 0 {
				t.Fatalf("not complete: phase %s, send %v", d.Status.Phase, d.Send)
			}
			in.Prior, in.Now = &d.Status, in.Now.Add(time.Hour)
			again := Decide(in)
			if len(again.Send) != 0 || !reflect.DeepEqual(again.Status, d.Status) || !reflect.DeepEqual(again.Conditions, d.Conditions) {
				t.Errorf("decided again an hour later:\n%+v\nwas\n%+v", again.Status, d.Status)
			}
			if tc.prior == nil && len(again.Status.Stages) != 0 {
				t.Errorf("a first revision gained stages: %+v", again.Status.Stages)
			}
			if tc.prior != nil && (len(again.Status.Stages) != 2 || again.Status.Stages[1].CompletedAt == nil) {
				t.Errorf("the staged change's stages: %+v", again.Status.Stages)
			}
		})
	}
}

// FuzzDecide checks invariants over random fleets: only the target or the
// last good revision is sent; nothing new goes out while paused; past
// the first revision (which goes everywhere at once), Progressive never
// has more than maxConcurrency clusters updating that it sent and a
// Staged rollout never sends a stage before the stages ahead of it
// finished; the decision does not depend on the clusters'
// order.
func FuzzDecide(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(1), false, false)
	f.Add(uint64(7), uint8(9), uint8(2), true, true)
	f.Fuzz(func(t *testing.T, seed uint64, n, maxConc uint8, isStaged, paused bool) {
		r := rand.New(rand.NewPCG(seed, seed>>7))
		count := int(n%12) + 1
		revs := []string{"a", "b", "c"}
		s := progressive(intstr.FromInt32(int32(maxConc%4)+1), int32(r.IntN(3))*10)
		if isStaged {
			s = staged(stage("s0", policyv1alpha1.ApprovalMode([]string{"None", "Before", "After"}[r.IntN(3)]), int32(r.IntN(2))*20), stage("s1", policyv1alpha1.ApprovalNone, 0))
			s.MaxConcurrency = ptr.To(intstr.FromInt32(int32(maxConc%4) + 1))
		}
		pr := &workv1alpha1.RolloutStatus{Revision: revs[r.IntN(3)], LastGoodRevision: []string{"", "a", "b"}[r.IntN(3)], StartedAt: at(0)}
		var clusters []Cluster
		for i := range count {
			c := Cluster{Name: fmt.Sprintf("m%02d", i), HasWork: r.IntN(6) > 0, Ready: r.IntN(2) == 0}
			if c.HasWork {
				c.Revision = revs[r.IntN(3)]
			}
			if isStaged && r.IntN(4) > 0 {
				c.Stages = []int{r.IntN(2)}
			}
			clusters = append(clusters, c)
			pr.Clusters = append(pr.Clusters, was(c.Name, c.Revision, r.IntN(200), r.IntN(200)-50, r.IntN(8) == 0))
		}
		in := Input{Strategy: s, Target: "b", Prior: pr, Clusters: clusters, Now: t0.Add(150 * time.Second),
			Control: &workv1alpha1.RolloutControl{Paused: paused}}
		d := Decide(in)
		targetSends := 0
		for _, x := range d.Send {
			if x.Revision != "b" && x.Revision != pr.LastGoodRevision {
				t.Fatalf("sent %s revision %s: neither the target nor the last good %q", x.Cluster, x.Revision, pr.LastGoodRevision)
			}
			if x.Revision == "b" && x.Revision != pr.LastGoodRevision {
				targetSends++
			}
		}
		if pr.Revision == "b" && paused && targetSends > 0 {
			t.Fatalf("paused, yet sent the target: %v", d.Send)
		}
		// The first revision (nothing good, no cluster on another) goes
		// everywhere at once by design: waves and stages order changes.
		first := pr.LastGoodRevision == "" && !slices.ContainsFunc(clusters, func(c Cluster) bool { return c.HasWork && c.Revision != "b" })
		if pr.Revision == "b" && !first && targetSends > int(maxConc%4)+1 {
			t.Fatalf("sent the target to %d clusters, maxConcurrency %d", targetSends, maxConc%4+1)
		}
		if isStaged && pr.Revision == "b" && !first {
			checkStageOrder(t, in, d)
		}
		shuffled := slices.Clone(clusters)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		in.Clusters = shuffled
		if again := Decide(in); !reflect.DeepEqual(again, d) {
			t.Fatalf("the clusters' order changed the decision:\n%+v\n%+v", d, again)
		}
	})
}

// checkStageOrder fails when the target went to a cluster of a stage while
// a cluster of an earlier stage was neither done nor failed.
func checkStageOrder(t *testing.T, in Input, d Decision) {
	status := map[string]workv1alpha1.ClusterRolloutStatus{}
	for _, c := range d.Status.Clusters {
		status[c.Name] = c
	}
	stageOf := func(c Cluster) int {
		if len(c.Stages) == 0 {
			return len(in.Strategy.Stages)
		}
		return c.Stages[0]
	}
	for _, x := range d.Send {
		if x.Revision != in.Target || x.Revision == in.Prior.LastGoodRevision {
			continue
		}
		var sent Cluster
		for _, c := range in.Clusters {
			if c.Name == x.Cluster {
				sent = c
			}
		}
		for _, c := range in.Clusters {
			s := status[c.Name]
			finished := s.Failed || (c.Revision == in.Target && c.HasWork && c.Ready && s.HealthySince != nil &&
				!in.Now.Before(s.HealthySince.Add(time.Duration(in.Strategy.MinSuccessSeconds)*time.Second)))
			if stageOf(c) < stageOf(sent) && !finished {
				t.Fatalf("sent %s (stage %d) while %s (stage %d) is not finished", x.Cluster, stageOf(sent), c.Name, stageOf(c))
			}
		}
	}
}

// TestDecideBeforeThePlacement: a binding's controller can run before the
// scheduler places it. Nothing ran the revision then, so it is not good
// and the first placement still gets it everywhere at once (a revision
// marked good by an empty placement made the first placement go one
// cluster at a time, waiting on health the first revision never waits
// on).
func TestDecideBeforeThePlacement(t *testing.T) {
	in := Input{Strategy: progressive(intstr.FromInt32(1), 30), Target: "a", Now: t0}
	empty := Decide(in)
	if len(empty.Send) != 0 || empty.Status.LastGoodRevision != "" || empty.Status.Phase == workv1alpha1.RolloutPhaseComplete {
		t.Fatalf("no cluster placed: send %v, last good %q, phase %s; want nothing sent, nothing good, not complete", empty.Send, empty.Status.LastGoodRevision, empty.Status.Phase)
	}
	in.Prior, in.Now = &empty.Status, t0.Add(time.Second)
	in.Clusters = []Cluster{{Name: "m3"}, {Name: "m1"}, {Name: "m2"}}
	if placed := Decide(in); !reflect.DeepEqual(placed.Send, sends("m1=a", "m2=a", "m3=a")) {
		t.Fatalf("placed after an empty decision: send %v, want every cluster at once", placed.Send)
	}
	// A placement that empties after a good revision keeps it good.
	in.Prior = prior("a", "a")
	in.Clusters = nil
	if gone := Decide(in); gone.Status.LastGoodRevision != "a" {
		t.Fatalf("placement emptied: last good %q, want a kept", gone.Status.LastGoodRevision)
	}
	// A change decided while nothing is placed is not good either: of
	// the clusters placed next, the first wave (one cluster) gets the
	// change and the others the last good revision.
	in.Target = "b"
	gone := Decide(in)
	if gone.Status.LastGoodRevision != "a" {
		t.Fatalf("a change with nothing placed: last good %q, want a", gone.Status.LastGoodRevision)
	}
	in.Prior, in.Clusters = &gone.Status, []Cluster{{Name: "m1"}, {Name: "m2"}}
	if back := Decide(in); !reflect.DeepEqual(back.Send, sends("m1=b", "m2=a")) {
		t.Fatalf("placed again: send %v, want the change to m1 alone and the last good revision to m2", back.Send)
	}
}
