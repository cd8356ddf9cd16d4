package controllermanager

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

var testNames = []string{"detector", "scheduler", "execution", "failover"}

func TestParseSelection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		items   []string
		enabled []string // of testNames, in order
		err     string   // a fragment of the error
	}{
		{name: "star runs all", items: []string{"*"}, enabled: testNames},
		{name: "star minus one", items: []string{"*", "-failover"}, enabled: []string{"detector", "scheduler", "execution"}},
		{name: "order does not matter", items: []string{"-failover", "*"}, enabled: []string{"detector", "scheduler", "execution"}},
		{name: "names only", items: []string{"scheduler", "detector"}, enabled: []string{"detector", "scheduler"}},
		{name: "a disabled name without star", items: []string{"-failover"}, enabled: nil},
		{name: "spaces are trimmed", items: []string{" * ", " -execution"}, enabled: []string{"detector", "scheduler", "failover"}},
		{name: "a name twice", items: []string{"detector", "detector"}, enabled: []string{"detector"}},
		{name: "unknown name", items: []string{"*", "-shceduler"}, err: `unknown controller "shceduler": valid names are detector, scheduler, execution, failover`},
		{name: "unknown enabled name", items: []string{"cleanup"}, err: `unknown controller "cleanup"`},
		{name: "empty list", items: []string{}, err: "--controllers is empty"},
		{name: "empty item", items: []string{"*", ""}, err: "empty item"},
		{name: "a lone dash", items: []string{"-"}, err: "empty item"},
		{name: "minus star", items: []string{"-*"}, err: "-* is not a selection"},
		{name: "enabled and disabled", items: []string{"failover", "-failover"}, err: `"failover" both enabled and disabled`},
		{name: "case matters", items: []string{"Detector"}, err: `unknown controller "Detector"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := ParseSelection(tc.items, testNames)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range testNames {
				if sel.Enabled(n) {
					got = append(got, n)
				}
			}
			if !slices.Equal(got, tc.enabled) {
				t.Fatalf("enabled %v, want %v", got, tc.enabled)
			}
		})
	}
}

// TestSetupControllers: only the enabled controllers are set up, in the
// registry's order, all with the same dependencies; a failure names the
// controller and stops there.
func TestSetupControllers(t *testing.T) {
	var calls []string
	var seen []controllerdeps.Deps
	entry := func(name string, fail bool) Controller {
		return Controller{Name: name, Setup: func(d controllerdeps.Deps, _ Config, _ func(string) bool) error {
			calls = append(calls, name)
			seen = append(seen, d)
			if fail {
				return errors.New("boom")
			}
			return nil
		}}
	}
	d := controllerdeps.Deps{Clients: clusterclient.NewCache(nil, clusterclient.Options{}), Interpreter: interpreter.New()}
	cs := []Controller{entry("detector", false), entry("scheduler", false), entry("execution", false), entry("failover", false)}
	sel, err := ParseSelection([]string{"*", "-scheduler", "-failover"}, testNames)
	if err != nil {
		t.Fatal(err)
	}
	started, err := SetupControllers(d, Config{}, cs, sel)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"detector", "execution"}; !slices.Equal(calls, want) || !slices.Equal(started, want) {
		t.Fatalf("set up %v (reported %v), want %v", calls, started, want)
	}
	for _, s := range seen {
		if s.Clients != d.Clients || s.Interpreter != d.Interpreter {
			t.Fatal("a controller got other dependencies than the ones given")
		}
	}

	calls = nil
	cs[1] = entry("scheduler", true)
	started, err = SetupControllers(d, Config{}, cs, AllControllers())
	if err == nil || !strings.Contains(err.Error(), "setting up the scheduler controller: boom") {
		t.Fatalf("error %v, want the scheduler's failure", err)
	}
	if want := []string{"detector", "scheduler"}; !slices.Equal(calls, want) || !slices.Equal(started, []string{"detector"}) {
		t.Fatalf("set up %v (reported %v), want %v and to stop there", calls, started, want)
	}
}

// TestRegistry: names are unique and what the flag and the events use;
// the agent runs exactly its subset, in the registry's order.
func TestRegistry(t *testing.T) {
	names := Names(HubControllers())
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Fatalf("controller %q registered twice", n)
		}
		seen[n] = true
		if n != strings.ToLower(n) || strings.ContainsAny(n, " _*,") || strings.HasPrefix(n, "-") {
			t.Fatalf("controller name %q: use lower-case words joined by -", n)
		}
	}
	want := []string{"cluster-status", "execution", "work-status", "health-interpreter", "interpreter-customization", "orphans", "service-export"}
	if got := Names(AgentControllers()); !slices.Equal(got, want) {
		t.Fatalf("agent controllers %v, want %v", got, want)
	}
}

// TestRegistryCannotBeChangedByCallers: each call returns a table of its
// own, so a caller editing what it got changes nothing for the next one.
func TestRegistryCannotBeChangedByCallers(t *testing.T) {
	hub, agent := HubControllers(), AgentControllers()
	wantHub, wantAgent := Names(hub), Names(agent)
	hub[0].Name, hub[0].Setup = "changed", nil
	agent[0].Agent = false
	_ = append(hub[:1], Controller{Name: "added"})
	if got := Names(HubControllers()); !slices.Equal(got, wantHub) {
		t.Fatalf("hub controllers %v after a caller's edit, want %v", got, wantHub)
	}
	if got := Names(AgentControllers()); !slices.Equal(got, wantAgent) {
		t.Fatalf("agent controllers %v after a caller's edit, want %v", got, wantAgent)
	}
	for _, c := range HubControllers() {
		if c.Setup == nil {
			t.Fatalf("controller %s has no Setup after a caller's edit", c.Name)
		}
	}
	if !AllControllers().Enabled("anything") {
		t.Fatal("AllControllers does not enable every controller")
	}
}

// TestBindingOptions: Works get the execution controller's finalizer only
// when that controller runs beside the binding controller.
func TestBindingOptions(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  bool
	}{
		{[]string{"*"}, true},
		{[]string{"*", "-execution"}, false},
		{[]string{"binding"}, false},
		{[]string{"binding", "execution"}, true},
	} {
		sel, err := ParseSelection(tc.items, Names(HubControllers()))
		if err != nil {
			t.Fatal(err)
		}
		if got := bindingOptions(Config{}, sel.Enabled).WorkFinalizer; got != tc.want {
			t.Errorf("--controllers %v: WorkFinalizer %v, want %v", tc.items, got, tc.want)
		}
	}
}

// TestNewRefusesANegativeRetryCap: the controller manager refuses a
// negative --retry-max-delay before it starts anything.
func TestNewRefusesANegativeRetryCap(t *testing.T) {
	if _, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{RetryMaxDelay: -time.Minute}); err == nil || !strings.Contains(err.Error(), "--retry-max-delay") {
		t.Fatalf("want an error naming --retry-max-delay, got %v", err)
	}
}

// TestManagerOptions: without leader election there is no fence and the
// manager elects nobody; with it, the manager elects through the fence,
// builds its clients behind it, and keeps the Lease timing it was given.
func TestManagerOptions(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	mo, fence, err := managerOptions(cfg, Options{MetricsBindAddress: ":8080", SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	if fence != nil || mo.LeaderElection != nil || mo.NewClient != nil {
		t.Fatalf("leader election set up without being asked for: fence %v, %+v", fence, mo)
	}
	if mo.MetricsBindAddress != ":8080" || !mo.SkipNameValidation || mo.Scheme == nil {
		t.Fatalf("settings not passed on: %+v", mo)
	}
	mo, fence, err = managerOptions(cfg, Options{LeaderElection: true, Namespace: "ns", LeaderElectionID: "id", LeaseDuration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	le := mo.LeaderElection
	switch {
	case fence == nil || le == nil || mo.NewClient == nil:
		t.Fatalf("fence %v, leader election %+v, NewClient set %v", fence, le, mo.NewClient != nil)
	case le.Lock != resourcelock.Interface(fence):
		t.Fatal("the manager does not elect through the fence")
	case le.Namespace != "ns" || le.ID != "id" || le.LeaseDuration != time.Minute || le.RenewDeadline != 0:
		t.Fatalf("lease %+v", le)
	}
}
