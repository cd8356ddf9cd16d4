package scheduling

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Options configure the scheduling controllers.
type Options struct {
	// Workers is how many bindings of each kind are scheduled in parallel
	// (default 16). The queue never hands one binding to two workers.
	Workers int
	// Scheduler runs the cycles (default: a scheduler running Profile).
	Scheduler *scheduler.Scheduler
	// Profile is the profile the default scheduler runs (default
	// scheduler.DefaultProfile(); the controller manager's
	// --scheduler-config sets it). Unused when Scheduler is given.
	Profile *framework.Profile
	// SchedulerName is the spec.schedulerName this scheduler serves
	// (default the Profile's name, else scheduler.DefaultProfileName);
	// bindings naming another scheduler are left alone. An empty
	// schedulerName is served too.
	SchedulerName string
	// RetryBaseDelay and RetryMaxDelay bound the exponential back-off of
	// unschedulable bindings (default 1 s and 5 min).
	RetryBaseDelay, RetryMaxDelay time.Duration
	// Limits bound the replicas of a workload and of one cluster (defaults
	// scheduler.DefaultMaxReplicasPerWorkload and
	// DefaultMaxReplicasPerCluster; negative turns one off). They apply to
	// the default scheduler; a given Scheduler keeps its own.
	Limits scheduler.Limits
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Scheduler == nil {
		o.Scheduler = scheduler.NewDefault()
		o.Scheduler.Limits = withDefaultLimits(o.Limits)
	}
	if o.SchedulerName == "" && o.Profile != nil {
		o.SchedulerName = o.Profile.Name
	}
	if o.SchedulerName == "" {
		o.SchedulerName = scheduler.DefaultProfileName
	}
	if o.RetryBaseDelay <= 0 {
		o.RetryBaseDelay = time.Second
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = 5 * time.Minute
	}
	return o
}

// ControllerName names the scheduler in the registry and its events.
const ControllerName = "scheduler"

// withProfile builds the scheduler running opts.Profile, unless a
// Scheduler is given. It is built here, once, because it can fail (a
// profile that did not come through pkg/scheduler/profile is unchecked)
// and because both binding kinds share it.
func (o Options) withProfile() (Options, error) {
	if o.Scheduler != nil || o.Profile == nil {
		return o, nil
	}
	s, err := scheduler.New(*o.Profile, nil)
	if err != nil {
		return o, fmt.Errorf("scheduler profile: %w", err)
	}
	s.Limits = withDefaultLimits(o.Limits)
	o.Scheduler = s
	return o, nil
}

// bindingPredicate passes new bindings (and every binding at start-up) and
// updates of scheduling inputs (see inputsChanged).
func bindingPredicate() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(workv1alpha1.BindingObject)
			n, ok2 := e.ObjectNew.(workv1alpha1.BindingObject)
			return ok1 && ok2 && inputsChanged(o, n)
		},
		DeleteFunc: func(event.DeleteEvent) bool { return false },
	}
}

// withDefaultLimits fills unset limits with the defaults; a negative limit
// means none.
func withDefaultLimits(l scheduler.Limits) scheduler.Limits {
	pick := func(v, def int32) int32 {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return def
		}
		return v
	}
	return scheduler.Limits{
		MaxReplicasPerWorkload: pick(l.MaxReplicasPerWorkload, scheduler.DefaultMaxReplicasPerWorkload),
		MaxReplicasPerCluster:  pick(l.MaxReplicasPerCluster, scheduler.DefaultMaxReplicasPerCluster),
	}
}
