package browser

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// Scaling a workload shows on the open workloads page without a reload.
func TestLiveScale(t *testing.T) {
	shop(t)
	ctx := open(t, base+"/workloads?namespace=shop", 1280, 900)
	row := `document.querySelector('tr[data-workload="shop/web"] td.num')`
	waitJS(t, ctx, "web's replicas", row+` !== null && `+row+`.textContent.includes('/ 4')`)
	eval[bool](t, ctx, "window.__notReloaded = true")
	d := &appsv1.Deployment{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: shopNS, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	six := int32(6)
	d.Spec.Replicas = &six
	if err := hub.Patch(context.Background(), d, patch); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "6 replicas desired, without a reload", `window.__notReloaded === true && `+row+`.textContent.includes('/ 6')`)
}

// A member that stops answering turns NotReady on the open fleet page
// without a reload, and stands out.
func TestLiveClusterNotReady(t *testing.T) {
	ctx := open(t, base+"/", 1280, 900)
	cell := `document.querySelector('tr[data-cluster="member3"] td.state')`
	waitJS(t, ctx, "member3 Ready", cell+` !== null && `+cell+`.textContent.trim() === 'Ready'`)
	eval[bool](t, ctx, "window.__notReloaded = true")
	// The hub loses member3 (its path to it is cut), and gets it back
	// before the next test.
	member3.Set(fleetenv.LinkCut)
	t.Cleanup(func() {
		member3.Set(fleetenv.LinkUp)
		fleetenv.WaitClusterHealthy(t, hub, "member3")
	})
	waitJS(t, ctx, "member3 not Ready, without a reload", `window.__notReloaded === true && !`+cell+`.textContent.trim().startsWith('Ready') &&
		document.querySelector('tr[data-cluster="member3"]').classList.contains('attention') &&
		!document.querySelector('svg.fleet a[data-cluster="member3"] rect.tile').classList.contains('ready')`)
	shot(t, ctx, "fleet-notready")
}
