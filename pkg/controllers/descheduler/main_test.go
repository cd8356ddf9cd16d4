package descheduler_test

import (
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/binding"
	"github.com/shepherd-io/shepherd/pkg/controllers/descheduler"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// The integration tests run the descheduler and binding controllers
// against a real embedded hub, without members: a test writes the
// bindings' targets and aggregated status itself, standing in for the
// scheduler and the work status controller, and watches what the
// descheduler does with them.
var (
	hub *testenv.Hub
	cli client.Client
)

// threshold is the controllers' unschedulable threshold in these tests.
const threshold = 4 * time.Second

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }

// suite starts the hub for the first test that needs it (suite.Hub(t));
// the package's pure tests never wait for it.
var suite = testenv.Shared{
	Prefix: "shepherd-descheduler-",
	Before: func(h *testenv.Hub) (func(), error) {
		hub = h
		var err error
		cli, err = client.New(h.Config, client.Options{Scheme: scheme.Scheme})
		return nil, err
	},
}

// startManager runs the descheduler and binding controllers until the
// test ends.
func startManager(t *testing.T) {
	t.Helper()
	mgr, err := hub.StartManager(func(mgr ctrl.Manager) error {
		if err := descheduler.Setup(controllerdeps.Deps{Manager: mgr}, descheduler.Options{Threshold: threshold}); err != nil {
			return err
		}
		return binding.Setup(controllerdeps.Deps{Manager: mgr}, binding.Options{})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mgr.Stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}
