package controllermanager

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/binding"
	"github.com/shepherd-io/shepherd/pkg/controllers/clustercleanup"
	"github.com/shepherd-io/shepherd/pkg/controllers/clusterstatus"
	"github.com/shepherd-io/shepherd/pkg/controllers/cronfederatedhpa"
	"github.com/shepherd-io/shepherd/pkg/controllers/customization"
	"github.com/shepherd-io/shepherd/pkg/controllers/dependencies"
	"github.com/shepherd-io/shepherd/pkg/controllers/descheduler"
	"github.com/shepherd-io/shepherd/pkg/controllers/detector"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/controllers/failover"
	"github.com/shepherd-io/shepherd/pkg/controllers/federatedhpa"
	"github.com/shepherd-io/shepherd/pkg/controllers/orphans"
	"github.com/shepherd-io/shepherd/pkg/controllers/policystatus"
	"github.com/shepherd-io/shepherd/pkg/controllers/reschedule"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/controllers/serviceexport"
	"github.com/shepherd-io/shepherd/pkg/controllers/serviceimport"
	"github.com/shepherd-io/shepherd/pkg/controllers/workstatus"
)

// Config holds the options of the controllers that have any; zero values
// take each controller's defaults.
type Config struct {
	Detector      detector.Options
	Scheduling    scheduling.Options
	Binding       binding.Options
	ClusterStatus clusterstatus.Options
	Execution     execution.Options
	WorkStatus    workstatus.Options
	Failover      failover.Options
	Reschedule    reschedule.Options
	Descheduler   descheduler.Options
	Orphans       orphans.Options
	ServiceExport serviceexport.Options
	ServiceImport serviceimport.Options
	FederatedHPA  federatedhpa.Options
	// CronFederatedHPA's options.
	CronFederatedHPA cronfederatedhpa.Options
}

// Controller is one entry of the registry.
type Controller struct {
	// Name is how --controllers names it, and its events' reporter is
	// "shepherd-<Name>".
	Name string
	// Agent marks the controllers the agent of a Pull cluster runs too
	// (in agent mode: controllerdeps.Deps.PullCluster).
	Agent bool
	// Setup adds the controller to d.Manager; enabled tells which other
	// controllers run beside it.
	Setup func(d controllerdeps.Deps, c Config, enabled func(name string) bool) error
}

// registry lists every controller in the order a template travels:
// detector, scheduler, binding, status, execution, then failover. The
// controller manager starts the enabled ones in this order; the agent
// starts the enabled ones marked Agent. A function, not a variable: every
// caller gets a table of its own, so no caller (a test, an embedder) can
// change which controllers another one starts.
func registry() []Controller {
	return []Controller{
		{Name: detector.ControllerName, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return detector.Setup(d, c.Detector)
		}},
		{Name: scheduling.ControllerName, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return scheduling.Setup(d, c.Scheduling)
		}},
		{Name: binding.ControllerName, Setup: func(d controllerdeps.Deps, c Config, enabled func(string) bool) error {
			return binding.Setup(d, bindingOptions(c, enabled))
		}},
		{Name: policystatus.ControllerName, Setup: func(d controllerdeps.Deps, _ Config, _ func(string) bool) error {
			return policystatus.Setup(d)
		}},
		{Name: dependencies.ControllerName, Setup: func(d controllerdeps.Deps, _ Config, _ func(string) bool) error {
			return dependencies.Setup(d)
		}},
		{Name: reschedule.ControllerName, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return reschedule.Setup(d, c.Reschedule)
		}},
		{Name: clustercleanup.ControllerName, Setup: func(d controllerdeps.Deps, _ Config, _ func(string) bool) error {
			return clustercleanup.Setup(d)
		}},
		{Name: clusterstatus.ControllerName, Agent: true, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return clusterstatus.Setup(d, c.ClusterStatus)
		}},
		{Name: execution.ControllerName, Agent: true, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return execution.Setup(d, c.Execution)
		}},
		{Name: workstatus.ControllerName, Agent: true, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return workstatus.Setup(d, c.WorkStatus)
		}},
		{Name: customization.HealthControllerName, Agent: true, Setup: func(d controllerdeps.Deps, _ Config, _ func(string) bool) error {
			return customization.Setup(d, customization.Options{Controllers: []string{customization.HealthControllerName}})
		}},
		{Name: customization.ControllerName, Agent: true, Setup: func(d controllerdeps.Deps, _ Config, _ func(string) bool) error {
			return customization.Setup(d, customization.Options{Controllers: []string{customization.ControllerName}})
		}},
		{Name: orphans.ControllerName, Agent: true, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return orphans.Setup(d, c.Orphans)
		}},
		{Name: failover.ControllerName, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return failover.Setup(d, c.Failover)
		}},
		{Name: descheduler.ControllerName, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return descheduler.Setup(d, c.Descheduler)
		}},
		{Name: serviceexport.ControllerName, Agent: true, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return serviceexport.Setup(d, c.ServiceExport)
		}},
		{Name: serviceimport.ControllerName, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return serviceimport.Setup(d, c.ServiceImport)
		}},
		{Name: federatedhpa.ControllerName, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return federatedhpa.Setup(d, c.FederatedHPA)
		}},
		{Name: cronfederatedhpa.ControllerName, Setup: func(d controllerdeps.Deps, c Config, _ func(string) bool) error {
			return cronfederatedhpa.Setup(d, c.CronFederatedHPA)
		}},
	}
}

// bindingOptions are the binding controller's options: with the execution
// controller beside it, Works are created with its finalizer rather than
// patched with it afterwards; without it nothing would remove the
// finalizer, so Works get none.
func bindingOptions(c Config, enabled func(string) bool) binding.Options {
	o := c.Binding
	o.WorkFinalizer = enabled(execution.ControllerName)
	return o
}

// HubControllers are the controller manager's controllers (every entry
// of the registry), in start order; the slice is the caller's.
func HubControllers() []Controller { return registry() }

// AgentControllers are the agent's controllers, in start order; the slice
// is the caller's.
func AgentControllers() []Controller {
	return slices.DeleteFunc(registry(), func(c Controller) bool { return !c.Agent })
}

// Names are the controllers' names, in order.
func Names(cs []Controller) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// Selection is which controllers run, parsed from --controllers.
type Selection struct {
	all      bool
	enabled  map[string]bool
	disabled map[string]bool
}

// ParseSelection reads a --controllers list, spelled as
// kube-controller-manager and Karmada spell it: "*" enables every
// controller that is on by default (all of Shepherd's are), "name" enables
// one, "-name" disables one. A name is on when listed, off when listed
// with "-", else on only with "*". Names outside valid, "-*", an empty
// item and a name both enabled and disabled are refused, naming the valid
// names.
func ParseSelection(items []string, valid []string) (Selection, error) {
	s := Selection{enabled: map[string]bool{}, disabled: map[string]bool{}}
	list := func() string { return strings.Join(valid, ", ") }
	if len(items) == 0 {
		return s, fmt.Errorf("--controllers is empty: pass * for every controller, or names from: %s", list())
	}
	for _, raw := range items {
		it := strings.TrimSpace(raw)
		name, off := strings.CutPrefix(it, "-")
		switch {
		case it == "*":
			s.all = true
			continue
		case it == "" || name == "":
			return s, fmt.Errorf("--controllers has an empty item: write * for every controller, NAME to enable one, -NAME to disable one (names: %s)", list())
		case name == "*":
			return s, fmt.Errorf("--controllers: -* is not a selection: list the controllers to run instead (names: %s)", list())
		case !slices.Contains(valid, name):
			return s, fmt.Errorf("--controllers: unknown controller %q: valid names are %s", name, list())
		}
		if off {
			s.disabled[name] = true
		} else {
			s.enabled[name] = true
		}
		if s.enabled[name] && s.disabled[name] {
			return s, fmt.Errorf("--controllers names %q both enabled and disabled (%s and -%s): keep one", name, name, name)
		}
	}
	return s, nil
}

// Enabled reports whether the named controller runs.
func (s Selection) Enabled(name string) bool {
	switch {
	case s.disabled[name]:
		return false
	case s.enabled[name]:
		return true
	}
	return s.all
}

// AllControllers runs every controller. A function for the same reason as
// the registry: a Selection variable could be reassigned by any importer.
func AllControllers() Selection { return Selection{all: true} }

// SetupControllers adds the controllers of cs that sel enables to
// d.Manager, in order, all sharing d. It returns the names it set up.
func SetupControllers(d controllerdeps.Deps, cfg Config, cs []Controller, sel Selection) ([]string, error) {
	d = d.WithDefaults()
	var started []string
	for _, c := range cs {
		if !sel.Enabled(c.Name) {
			continue
		}
		if err := c.Setup(d, cfg, sel.Enabled); err != nil {
			return started, fmt.Errorf("setting up the %s controller: %w", c.Name, err)
		}
		started = append(started, c.Name)
	}
	return started, nil
}
