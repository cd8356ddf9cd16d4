package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// tasksFor counts the RescheduleTasks naming the template ns/name.
func tasksFor(t *testing.T, ns, name string) int {
	t.Helper()
	var list taskv1alpha1.RescheduleTaskList
	if err := hub.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range list.Items {
		for _, r := range task.Spec.TargetRefResource {
			if r.Namespace == ns && r.Name == name {
				n++
			}
		}
	}
	return n
}

// Reschedule on a workload's page creates a RescheduleTask with the
// user's identity: a viewer is refused by the hub, and nothing is created;
// an operator (examples/dashboard/operator.yaml) may.
func TestRescheduleAction(t *testing.T) {
	shop(t)
	before := tasksFor(t, shopNS, "web")

	viewer := open(t, base+"/login", 1280, 900)
	signIn(t, viewer, base, tokenFor(t, "viewer"))
	navigate(t, viewer, base+"/workloads/ns/shop/web-deployment")
	submit(t, viewer, `form[action="/actions/reschedule"] button`)
	waitJS(t, viewer, "the hub's refusal", `document.querySelector('p.error') !== null && document.querySelector('p.error').textContent.includes('forbidden') && document.querySelector('p.error').textContent.includes('dashboard-viewer')`)
	if n := tasksFor(t, shopNS, "web"); n != before {
		t.Fatalf("the viewer's refused Reschedule created a task (%d, was %d)", n, before)
	}

	ctx := open(t, base+"/login", 1280, 900)
	signIn(t, ctx, base, tokenFor(t, "operator"))
	navigate(t, ctx, base+"/workloads/ns/shop/web-deployment")
	submit(t, ctx, `form[action="/actions/reschedule"] button`)
	waitJS(t, ctx, "the task created", `document.querySelector('p.flash') !== null && document.querySelector('p.flash').textContent.includes('RescheduleTask reschedule-')`)
	if n := tasksFor(t, shopNS, "web"); n != before+1 {
		t.Fatalf("tasks naming shop/web: %d, want %d", n, before+1)
	}
}

// A purge mode Never failover appears live on the failover page with a
// Confirm action; a viewer's Confirm is refused by the hub, the admin's
// lets the old copy go.
func TestConfirmAction(t *testing.T) {
	const ns = "failover-never"
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "failover", "purge-never.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	applyYAML(t, string(data))
	waitBound(t, ns, "api-deployment", "member1")
	fleetenv.Eventually(t, "api Healthy on member1", func() error {
		rb := &workv1alpha1.ResourceBinding{}
		if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "api-deployment"}, rb); err != nil {
			return err
		}
		for _, s := range rb.Status.AggregatedStatus {
			if s.ClusterName == "member1" && s.Health == "Healthy" {
				return nil
			}
		}
		return fmt.Errorf("aggregated status %+v", rb.Status.AggregatedStatus)
	})

	ctx := open(t, base+"/failover", 1280, 900)
	waitJS(t, ctx, "the page", `document.querySelector('table.tasks') !== null`)
	eval[bool](t, ctx, "window.__notReloaded = true")
	defer fleetenv.Starve(t, env.Members["member1"], ns, "api")()
	confirm := `form[action="/actions/confirm"] button[aria-label*="failover-never/api"]`
	waitJS(t, ctx, "the eviction awaiting confirmation, without a reload", `window.__notReloaded === true && document.querySelector(`+jsString(confirm)+`) !== null`)
	shot(t, ctx, "failover-confirm")

	viewer := open(t, base+"/login", 1280, 900)
	signIn(t, viewer, base, tokenFor(t, "viewer"))
	navigate(t, viewer, base+"/failover")
	submit(t, viewer, confirm)
	waitJS(t, viewer, "the hub's refusal", `document.querySelector('p.error') !== null && document.querySelector('p.error').textContent.includes('forbidden')`)
	rb := &workv1alpha1.ResourceBinding{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "api-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	for _, task := range rb.Spec.GracefulEvictionTasks {
		if task.Confirmed {
			t.Fatal("the viewer's refused Confirm confirmed the eviction")
		}
	}
	if err := env.Members["member1"].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "api"}, &appsv1.Deployment{}); err != nil {
		t.Fatalf("the old copy went without confirmation: %v", err)
	}

	submit(t, ctx, confirm)
	waitJS(t, ctx, "the confirmation", `document.querySelector('p.flash') !== null && document.querySelector('p.flash').textContent.includes('Confirmed')`)
	fleetenv.Eventually(t, "the old copy removed from member1", func() error {
		err := env.Members["member1"].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "api"}, &appsv1.Deployment{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

// Beyond loopback every page needs a token the hub accepts; a viewer's
// token shows the fleet.
func TestTokenRequired(t *testing.T) {
	ctx := open(t, tokenBase+"/", 1280, 900)
	waitJS(t, ctx, "the sign-in page", `document.querySelector('#token') !== null && document.body.innerText.includes('bearer token is needed')`)
	if n := eval[float64](t, ctx, `document.querySelectorAll('svg.fleet').length`); n != 0 {
		t.Fatal("the fleet is shown without a token")
	}
	signIn(t, ctx, tokenBase, "not-a-token")
	waitJS(t, ctx, "the hub's rejection", `document.querySelector('p.error') !== null && document.querySelector('p.error').textContent.includes('did not accept the token')`)
	signIn(t, ctx, tokenBase, tokenFor(t, "viewer"))
	waitJS(t, ctx, "the fleet", `document.querySelectorAll('svg.fleet a[data-cluster]').length >= 3`)
}

// The in-hub example of docs/dashboard.md is accepted by a real hub.
func TestInHubExampleApplies(t *testing.T) {
	tokenFor(t, "viewer") // its ClusterRole
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "dashboard", "in-hub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	applyYAML(t, string(data))
}
