package failover_test

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/binding"
	"github.com/shepherd-io/shepherd/pkg/controllers/failover"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// The integration tests run the failover and binding controllers against a
// real embedded hub, without members: a test writes the bindings' targets
// and aggregated status itself, standing in for the scheduler and the work
// status controller, and watches what failover does with them.
var (
	hub *testenv.Hub
	cli client.Client
)

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }

// suite starts the hub for the first test that needs it (suite.Hub(t));
// the package's pure tests never wait for it.
var suite = testenv.Shared{
	Prefix: "shepherd-failover-",
	Before: func(h *testenv.Hub) (func(), error) {
		hub = h
		var err error
		cli, err = client.New(h.Config, client.Options{Scheme: scheme.Scheme})
		return nil, err
	},
}

// startManager runs the failover and binding controllers until the
// returned stop function is called; tests that restart the controllers
// call it several times.
func startManager(t *testing.T) (stop func()) {
	t.Helper()
	mgr, err := hub.StartManager(func(mgr ctrl.Manager) error {
		if err := failover.Setup(controllerdeps.Deps{Manager: mgr}, failover.Options{}); err != nil {
			return err
		}
		return binding.Setup(controllerdeps.Deps{Manager: mgr}, binding.Options{})
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		if err := mgr.Stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}
