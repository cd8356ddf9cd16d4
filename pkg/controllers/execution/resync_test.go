package execution_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
)

// TestResyncWritesNothingWhenNothingChanged: the periodic apply of a Work
// whose member objects are as it left them writes neither the member
// objects nor the Work's status, for kinds with a generation and without
// one alike: at 20,000 Works, one status write per Work and resync period
// would be a steady 33 writes a second on a fleet at rest.
func TestResyncWritesNothingWhenNothingChanged(t *testing.T) {
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	member := membershiptest.StartMember(t, "m1")
	member.Join(t, hub)
	mk := member.Kube(t)

	const resync = 2 * time.Second
	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		d := controllerdeps.Deps{Manager: mgr, Clients: clusterclient.NewCache(mgr.GetClient(), clusterclient.Options{RequestTimeout: 3 * time.Second})}
		return execution.Setup(d, execution.Options{Workers: 2, ResyncPeriod: resync})
	})

	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	slice := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "checkout-m2", Labels: map[string]string{discoveryv1.LabelServiceName: "checkout"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	w := membershiptest.Work(t, "m1", "resync", nil, configMap("shop", "settings"), deployment("shop", "web", 2), svc, slice)
	membershiptest.CreateWork(t, hub, w)
	key := client.ObjectKeyFromObject(w)
	work := &workv1alpha1.Work{}
	waitApplied(t, hub, key, work, "True", execution.ReasonAppliedSuccessful)

	// Let the first passes settle (the status of the Deployment the member
	// writes, the first hand-over of fields to server-side apply), then
	// watch several resync periods.
	time.Sleep(3 * resync)
	if err := hub.Get(ctx, key, work); err != nil {
		t.Fatal(err)
	}
	before := work.ResourceVersion
	objects := func() map[string]string {
		rvs := map[string]string{}
		cm, err := mk.CoreV1().ConfigMaps("shop").Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs["configmap"] = cm.ResourceVersion
		s, err := mk.CoreV1().Services("shop").Get(ctx, "checkout", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs["service"] = s.ResourceVersion
		es, err := mk.DiscoveryV1().EndpointSlices("shop").Get(ctx, "checkout-m2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs["endpointslice"] = es.ResourceVersion
		return rvs
	}
	was := objects()
	applies := appliedSuccessfully(t)
	time.Sleep(4 * resync)
	if n := appliedSuccessfully(t) - applies; n < 2 {
		t.Fatalf("%v applies in %s with a resync period of %s: the resync did not run", n, 4*resync, resync)
	}
	if err := hub.Get(ctx, key, work); err != nil {
		t.Fatal(err)
	}
	if work.ResourceVersion != before {
		t.Errorf("the Work was written during %s of resyncs with nothing changed (resourceVersion %s -> %s); status now: %+v",
			4*resync, before, work.ResourceVersion, work.Status.ManifestStatuses)
	}
	for k, rv := range objects() {
		if rv != was[k] {
			t.Errorf("the member's %s was written by a resync with nothing changed (resourceVersion %s -> %s)", k, was[k], rv)
		}
	}
}

// appliedSuccessfully reads the count of successful applies from the
// controllers' metrics registry.
func appliedSuccessfully(t *testing.T) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "shepherd_work_apply_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == "success" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
