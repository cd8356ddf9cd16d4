package managerconfig

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestManagerOptionsDefaults: the zero settings turn the endpoints off,
// validate controller names, leave shutdown and leader election alone.
func TestManagerOptionsDefaults(t *testing.T) {
	got := Options{Scheme: scheme.Scheme}.ManagerOptions()
	if got.Metrics.BindAddress != "0" || got.HealthProbeBindAddress != "0" {
		t.Errorf("metrics %q, probes %q; want both \"0\" (off)", got.Metrics.BindAddress, got.HealthProbeBindAddress)
	}
	if got.Controller.SkipNameValidation == nil || *got.Controller.SkipNameValidation {
		t.Errorf("SkipNameValidation %v, want false", got.Controller.SkipNameValidation)
	}
	if got.GracefulShutdownTimeout != nil {
		t.Errorf("GracefulShutdownTimeout %v, want nil (controller-runtime's)", *got.GracefulShutdownTimeout)
	}
	if got.LeaderElection || got.LeaderElectionResourceLockInterface != nil || got.LeaseDuration != nil {
		t.Errorf("leader election set without being asked for: %+v", got)
	}
	if got.Scheme != scheme.Scheme {
		t.Error("the scheme was not passed on")
	}
	if got.Cache.DefaultTransform == nil {
		t.Fatal("no cache transform: managedFields would be cached")
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err := got.Cache.DefaultTransform(cm)
	if err != nil || len(out.(*corev1.ConfigMap).ManagedFields) != 0 || out.(*corev1.ConfigMap).Name != "x" {
		t.Errorf("transform gave %+v, %v; want the object without managedFields", out, err)
	}
}

// TestManagerOptionsKeepsACallersTransform: a cache transform the caller
// set is not replaced.
func TestManagerOptionsKeepsACallersTransform(t *testing.T) {
	called := false
	mine := func(o any) (any, error) { called = true; return o, nil }
	got := Options{Scheme: scheme.Scheme, Cache: cache.Options{DefaultTransform: mine}}.ManagerOptions()
	if _, err := got.Cache.DefaultTransform(&corev1.ConfigMap{}); err != nil || !called {
		t.Errorf("the caller's transform was replaced (called %v, err %v)", called, err)
	}
}

// TestManagerOptionsSettings: what a caller sets reaches
// controller-runtime, the Lease is released on a clean stop, and
// durations that are not positive take the library's defaults.
func TestManagerOptionsSettings(t *testing.T) {
	lock := fakeLock{}
	newClient := func(*rest.Config, client.Options) (client.Client, error) { return nil, nil }
	got := Options{
		Scheme:                  scheme.Scheme,
		NewClient:               newClient,
		MetricsBindAddress:      ":8080",
		HealthProbeBindAddress:  ":8081",
		SkipNameValidation:      true,
		GracefulShutdownTimeout: 2 * time.Second,
		LeaderElection: &LeaderElection{Namespace: "ns", ID: "lease", Lock: lock,
			LeaseDuration: 40 * time.Second, RenewDeadline: 30 * time.Second, RetryPeriod: -1},
	}.ManagerOptions()
	switch {
	case got.Metrics.BindAddress != ":8080" || got.HealthProbeBindAddress != ":8081":
		t.Errorf("metrics %q, probes %q", got.Metrics.BindAddress, got.HealthProbeBindAddress)
	case got.NewClient == nil:
		t.Error("NewClient was not passed on")
	case !*got.Controller.SkipNameValidation:
		t.Error("SkipNameValidation was not passed on")
	case got.GracefulShutdownTimeout == nil || *got.GracefulShutdownTimeout != 2*time.Second:
		t.Errorf("GracefulShutdownTimeout %v", got.GracefulShutdownTimeout)
	case !got.LeaderElection || !got.LeaderElectionReleaseOnCancel:
		t.Errorf("leader election %v, release on cancel %v; want both", got.LeaderElection, got.LeaderElectionReleaseOnCancel)
	case got.LeaderElectionNamespace != "ns" || got.LeaderElectionID != "lease" || got.LeaderElectionResourceLockInterface != lock:
		t.Errorf("lease %s/%s, lock %v", got.LeaderElectionNamespace, got.LeaderElectionID, got.LeaderElectionResourceLockInterface)
	case *got.LeaseDuration != 40*time.Second || *got.RenewDeadline != 30*time.Second || got.RetryPeriod != nil:
		t.Errorf("lease duration %v, renew deadline %v, retry period %v", *got.LeaseDuration, *got.RenewDeadline, got.RetryPeriod)
	}
}

// TestNewReachesNoServer: New builds the manager without reaching the API
// server, so a process can build it before the hub answers.
func TestNewReachesNoServer(t *testing.T) {
	if _, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{Scheme: scheme.Scheme}); err != nil {
		t.Fatal(err)
	}
}

// fakeLock is a resourcelock.Interface that is never used.
type fakeLock struct{ resourcelock.Interface }

// TestManagerOptionsQuietOnShutdown: the manager's logger reports a
// reconcile cut off by the process stopping (context.Canceled) as V(1)
// information, any other error as an error.
func TestManagerOptionsQuietOnShutdown(t *testing.T) {
	var got []string
	l := funcr.New(func(_, args string) {
		kind := "info"
		if strings.Contains(args, `"error"=`) {
			kind = "error"
		}
		got = append(got, kind)
	}, funcr.Options{Verbosity: 0})
	log := Options{Logger: l}.ManagerOptions().Logger
	log.Error(fmt.Errorf("listing Works: %w", context.Canceled), "Reconciler error")
	log.Error(errors.New("the hub refused the write"), "Reconciler error")
	if want := []string{"error"}; !slices.Equal(got, want) {
		t.Errorf("at -v 0 logged %v, want %v (the canceled reconcile hidden, the failure an error)", got, want)
	}
}
