package serviceimport_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/controllers/serviceexport"
	"github.com/shepherd-io/shepherd/pkg/controllers/serviceimport"
	"github.com/shepherd-io/shepherd/pkg/mcs"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
)

// TestServicesAcrossRealMembers runs the MCS loop against a real hub and
// two real members (Push): the MCS API arrives in each member, an export
// in one member becomes a ServiceImport with an IP, a derived Service and
// the exporter's endpoints in both, a second export with other ports is a
// Conflict on both exports while the import takes the union, and
// unexporting everywhere removes the import from every member.
func TestServicesAcrossRealMembers(t *testing.T) {
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	type memberClients struct {
		kube kubernetes.Interface
		mcs  mcsclient.Interface
	}
	ms := map[string]memberClients{}
	for _, name := range []string{"m1", "m2"} {
		m := membershiptest.StartMember(t, name)
		m.Join(t, hub)
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			t.Fatal(err)
		}
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "Probed"})
		if err := hub.Status().Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		mc, err := mcsclient.NewForConfig(m.Config())
		if err != nil {
			t.Fatal(err)
		}
		ms[name] = memberClients{kube: m.Kube(t), mcs: mc}
	}
	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		d := controllerdeps.Deps{Manager: mgr, Clients: clusterclient.NewCache(mgr.GetClient(), clusterclient.Options{RequestTimeout: 5 * time.Second})}
		for _, setup := range []func() error{
			func() error { return execution.Setup(d, execution.Options{}) },
			func() error { return serviceexport.Setup(d, serviceexport.Options{}) },
			func() error {
				return serviceimport.Setup(d, serviceimport.Options{ClusterSet: "fleet", Members: labels.SelectorFromSet(nil).Add(notOff())})
			},
		} {
			if err := setup(); err != nil {
				return err
			}
		}
		return nil
	})

	eventually := func(what string, f func() error) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			err := f()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				works := &workv1alpha1.WorkList{}
				_ = hub.List(ctx, works)
				for _, w := range works.Items {
					t.Logf("Work %s/%s: %+v", w.Namespace, w.Name, w.Status.Conditions)
				}
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for name, m := range ms {
		eventually("the MCS CRDs and ClusterProperties in "+name, func() error {
			_, err := m.mcs.MulticlusterV1beta1().ServiceExports("default").List(ctx, metav1.ListOptions{})
			return err
		})
	}

	export := func(member string, ports ...corev1.ServicePort) {
		t.Helper()
		m := ms[member]
		if _, err := m.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout"}, Spec: corev1.ServiceSpec{Ports: ports, Selector: map[string]string{"app": "checkout"}}}
		if _, err := m.kube.CoreV1().Services("shop").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Members here run no EndpointSlice controller: write the slice it
		// would.
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "checkout-" + member, Labels: map[string]string{discoveryv1.LabelServiceName: "checkout"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.9.1.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(ports[0].Name), Port: ptr.To(ports[0].Port), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}
		if member == "m2" {
			slice.Endpoints[0].Addresses = []string{"10.9.2.1"}
		}
		if _, err := m.kube.DiscoveryV1().EndpointSlices("shop").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout"}}
		if _, err := m.mcs.MulticlusterV1beta1().ServiceExports("shop").Create(ctx, se, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	condition := func(member, typ string, want metav1.ConditionStatus) func() error {
		return func() error {
			se, err := ms[member].mcs.MulticlusterV1beta1().ServiceExports("shop").Get(ctx, "checkout", metav1.GetOptions{})
			if err != nil {
				return err
			}
			c := meta.FindStatusCondition(se.Status.Conditions, typ)
			if c == nil || c.Status != want {
				return fmt.Errorf("condition %s is %+v, want %s", typ, c, want)
			}
			return nil
		}
	}
	imported := func(member string, check func(*mcsv1beta1.ServiceImport) error) func() error {
		return func() error {
			si, err := ms[member].mcs.MulticlusterV1beta1().ServiceImports("shop").Get(ctx, "checkout", metav1.GetOptions{})
			if err != nil {
				return err
			}
			return check(si)
		}
	}
	web := corev1.ServicePort{Name: "web", Port: 80, Protocol: corev1.ProtocolTCP}
	export("m1", web)
	eventually("m1's export Valid", condition("m1", "Valid", metav1.ConditionTrue))
	eventually("m1's export Ready", condition("m1", "Ready", metav1.ConditionTrue))
	for _, member := range []string{"m1", "m2"} {
		eventually("the import in "+member, imported(member, func(si *mcsv1beta1.ServiceImport) error {
			switch {
			case si.Spec.Type != mcsv1beta1.ClusterSetIP:
				return fmt.Errorf("type %s", si.Spec.Type)
			case len(si.Spec.IPs) == 0 || len(si.Spec.IPs) != len(si.Spec.IPFamilies):
				return fmt.Errorf("ips %v families %v", si.Spec.IPs, si.Spec.IPFamilies)
			case len(si.Status.Clusters) != 1 || si.Status.Clusters[0].Cluster != "m1":
				return fmt.Errorf("status clusters %v", si.Status.Clusters)
			case len(si.Spec.Ports) != 1 || si.Spec.Ports[0].Port != 80:
				return fmt.Errorf("ports %v", si.Spec.Ports)
			}
			derived, err := ms[member].kube.CoreV1().Services("shop").Get(ctx, mcs.DerivedServiceName("checkout"), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !slices.Equal(derived.Spec.ClusterIPs, si.Spec.IPs) {
				return fmt.Errorf("import IPs %v, derived Service's %v", si.Spec.IPs, derived.Spec.ClusterIPs)
			}
			return nil
		}))
		eventually("m1's endpoints in "+member, func() error {
			slices, err := ms[member].kube.DiscoveryV1().EndpointSlices("shop").List(ctx, metav1.ListOptions{LabelSelector: mcsv1beta1.LabelSourceCluster + "=m1," + mcsv1beta1.LabelServiceName + "=checkout"})
			if err != nil {
				return err
			}
			if len(slices.Items) != 1 || len(slices.Items[0].Endpoints) != 1 || slices.Items[0].Endpoints[0].Addresses[0] != "10.9.1.1" {
				return fmt.Errorf("imported slices %+v", slices.Items)
			}
			if slices.Items[0].Labels[discoveryv1.LabelServiceName] != mcs.DerivedServiceName("checkout") || slices.Items[0].Labels[discoveryv1.LabelManagedBy] != mcs.ManagedBy {
				return fmt.Errorf("imported slice labels %v", slices.Items[0].Labels)
			}
			return nil
		})
	}

	// m2 exports the same Service with one more port: the import takes
	// the union and both exports report the conflict.
	export("m2", web, corev1.ServicePort{Name: "admin", Port: 9090, Protocol: corev1.ProtocolTCP})
	eventually("m1's export in conflict", condition("m1", "Conflict", metav1.ConditionTrue))
	eventually("m2's export in conflict", condition("m2", "Conflict", metav1.ConditionTrue))
	eventually("the union of the ports in m1", imported("m1", func(si *mcsv1beta1.ServiceImport) error {
		if len(si.Spec.Ports) != 2 || len(si.Status.Clusters) != 2 {
			return fmt.Errorf("ports %v, clusters %v", si.Spec.Ports, si.Status.Clusters)
		}
		return nil
	}))

	// Unexported from m1, the import stays (m2 exports it) with m2 only.
	if err := ms["m1"].mcs.MulticlusterV1beta1().ServiceExports("shop").Delete(ctx, "checkout", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("the import without m1", imported("m2", func(si *mcsv1beta1.ServiceImport) error {
		if len(si.Status.Clusters) != 1 || si.Status.Clusters[0].Cluster != "m2" {
			return fmt.Errorf("clusters %v", si.Status.Clusters)
		}
		return nil
	}))
	eventually("m2's export without conflict", condition("m2", "Conflict", metav1.ConditionFalse))

	// m2 leaves the ClusterSet (its labels no longer match the
	// selector): its export is not imported any more, and says why; the
	// import, exported by no member now, leaves m1.
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "m2"}, c); err != nil {
		t.Fatal(err)
	}
	c.Labels = map[string]string{"mcs": "off"}
	if err := hub.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	eventually("m2's export Pending outside the ClusterSet", condition("m2", "Ready", metav1.ConditionFalse))
	eventually("no import in m1 once m2 left", func() error {
		_, err := ms["m1"].mcs.MulticlusterV1beta1().ServiceImports("shop").Get(ctx, "checkout", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})

	// Unexported everywhere, the import leaves every member.
	if err := ms["m2"].mcs.MulticlusterV1beta1().ServiceExports("shop").Delete(ctx, "checkout", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{"m1", "m2"} {
		eventually("no import in "+member, func() error {
			_, err := ms[member].mcs.MulticlusterV1beta1().ServiceImports("shop").Get(ctx, "checkout", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
	}
	// The member's own Service stays: Shepherd removes only what it wrote.
	if _, err := ms["m1"].kube.CoreV1().Services("shop").Get(ctx, "checkout", metav1.GetOptions{}); err != nil {
		t.Fatalf("the exported Service itself: %v", err)
	}
}

// notOff selects Clusters not labelled mcs=off.
func notOff() labels.Requirement {
	r, err := labels.NewRequirement("mcs", selection.NotEquals, []string{"off"})
	if err != nil {
		panic(err)
	}
	return *r
}
