package agent

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// registeredHub starts a hub (stopped when t ends) and registers the Pull
// cluster there as `shepherd register` does, with an hour-long token: the
// hub, an admin client of it, and the registration.
func registeredHub(t *testing.T, cluster string) (*testenv.Hub, client.Client, *membership.Registration) {
	t.Helper()
	testenv.Heavy(t)
	hub, err := testenv.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Stop() })
	admin, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := membership.Register(context.Background(), hub.Config, admin, membership.RegisterOptions{Name: cluster, TokenTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return hub, admin, reg
}
