package browser

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
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
// without a reload, and stands out. The hub loses member3 by having its
// endpoint point at a link that never answers; the test's cleanup points it
// back and waits until member3 is Ready and untainted again, so no other
// test depends on running before or after this one.
func TestLiveClusterNotReady(t *testing.T) {
	ctx := open(t, base+"/", 1280, 900)
	cell := `document.querySelector('tr[data-cluster="member3"] td.state')`
	waitJS(t, ctx, "member3 Ready", cell+` !== null && `+cell+`.textContent.trim() === 'Ready'`)
	eval[bool](t, ctx, "window.__notReloaded = true")
	cutOff(t, "member3")
	waitJS(t, ctx, "member3 not Ready, without a reload", `window.__notReloaded === true && !`+cell+`.textContent.trim().startsWith('Ready') &&
		document.querySelector('tr[data-cluster="member3"]').classList.contains('attention') &&
		!document.querySelector('svg.fleet a[data-cluster="member3"] rect.tile').classList.contains('ready')`)
	shot(t, ctx, "fleet-notready")
}

// cutOff makes the hub lose the member: its Cluster's endpoint points at a
// link that never answers until the test ends; then the endpoint is put
// back and the test's cleanup waits until the member is Ready again and
// its unreachable taints are gone.
func cutOff(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		t.Fatal(err)
	}
	endpoint := c.Spec.APIEndpoint
	dead := membershiptest.BlackHole(t) // registered first, so closed last
	t.Cleanup(func() {
		setEndpoint(t, name, endpoint)
		fleetenv.WaitClusterHealthy(t, hub, name)
	})
	setEndpoint(t, name, dead)
}

func setEndpoint(t *testing.T, name, endpoint string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"apiEndpoint":%q}}`, endpoint)
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := hub.Patch(context.Background(), c, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("setting %s's endpoint: %v", name, err)
	}
}
