package scheduling

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler"
)

// TestOptionsProfile: a profile in the options is what the scheduler runs,
// with the default limits, and its name is the schedulerName served; a
// profile the scheduler refuses fails Setup's option step.
func TestOptionsProfile(t *testing.T) {
	p := scheduler.DefaultProfile().Disable("Capacity")
	p.Name = "gpu-scheduler"
	o, err := Options{Profile: &p, Limits: scheduler.Limits{MaxReplicasPerCluster: -1}}.withProfile()
	if err != nil {
		t.Fatal(err)
	}
	o = o.withDefaults()
	if got := o.Scheduler.Profile(); !reflect.DeepEqual(got, p) {
		t.Errorf("scheduler runs %+v, want %+v", got, p)
	}
	if o.SchedulerName != "gpu-scheduler" {
		t.Errorf("schedulerName %q, want the profile's", o.SchedulerName)
	}
	if want := (scheduler.Limits{MaxReplicasPerWorkload: scheduler.DefaultMaxReplicasPerWorkload}); o.Scheduler.Limits != want {
		t.Errorf("limits %+v, want %+v", o.Scheduler.Limits, want)
	}

	bad := p.WithFilter("Missing")
	if _, err := (Options{Profile: &bad}).withProfile(); err == nil || !strings.Contains(err.Error(), `plugin "Missing" is not registered`) {
		t.Errorf("bad profile: %v", err)
	}

	// Without a profile: the default scheduler and name, as before.
	o, err = Options{}.withProfile()
	if err != nil {
		t.Fatal(err)
	}
	o = o.withDefaults()
	if !reflect.DeepEqual(o.Scheduler.Profile(), scheduler.DefaultProfile()) || o.SchedulerName != scheduler.DefaultProfileName {
		t.Errorf("default: %+v, %q", o.Scheduler.Profile(), o.SchedulerName)
	}
}
