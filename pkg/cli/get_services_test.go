package cli

import (
	"reflect"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

// TestServiceRows (mcs.Summarize and the CLI's row): one row per Service whatever order the exports come
// in, its clusters by name with their endpoint counts, a cluster the hub
// left out marked, and the conflict of the exports.
func TestServiceRows(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	export := func(cluster, ns, name string, endpoints int, ready bool, at time.Time, ports ...int32) mcv1alpha1.ExportedService {
		es := mcv1alpha1.ExportedService{ObjectMeta: metav1.ObjectMeta{Namespace: "shepherd-es-" + cluster}, Spec: mcv1alpha1.ExportedServiceSpec{Cluster: cluster, Namespace: ns, Name: name,
			ExportedAt: metav1.NewTime(at), Type: mcsv1beta1.ClusterSetIP}}
		for _, p := range ports {
			es.Spec.Ports = append(es.Spec.Ports, mcsv1beta1.ServicePort{Name: "p", Port: p, Protocol: "TCP"})
		}
		slice := mcv1alpha1.ExportedEndpointSlice{Name: "s", AddressType: discoveryv1.AddressTypeIPv4}
		for range endpoints {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}})
		}
		es.Spec.EndpointSlices = []mcv1alpha1.ExportedEndpointSlice{slice}
		status := metav1.ConditionFalse
		if ready {
			status = metav1.ConditionTrue
		}
		es.Status.Conditions = []metav1.Condition{{Type: mcv1alpha1.ConditionReady, Status: status}}
		return es
	}
	for _, tc := range []struct {
		name    string
		exports []mcv1alpha1.ExportedService
		want    [][]string
	}{
		{"none", nil, nil},
		{"two Services, clusters sorted, a cluster left out marked",
			[]mcv1alpha1.ExportedService{
				export("member2", "shop", "web", 3, true, t0, 80),
				export("member1", "shop", "api", 1, true, t0, 8080),
				export("member1", "shop", "web", 2, false, t0, 80),
			},
			[][]string{
				{"shop", "api", "ClusterSetIP", "member1(1)", "-"},
				{"shop", "web", "ClusterSetIP", "member1(2)[not ready], member2(3)", "-"},
			}},
		{"a report stored in another cluster's namespace is left out, as the hub leaves it",
			[]mcv1alpha1.ExportedService{
				export("member1", "shop", "web", 1, true, t0, 80),
				func() mcv1alpha1.ExportedService {
					forged := export("member1", "shop", "web", 9, true, t0, 80)
					forged.Namespace = "shepherd-es-member2"
					return forged
				}(),
			},
			[][]string{{"shop", "web", "ClusterSetIP", "member1(1)", "-"}}},
		{"exports that disagree on ports show the conflict",
			[]mcv1alpha1.ExportedService{
				export("member1", "shop", "web", 1, true, t0, 80),
				export("member2", "shop", "web", 1, true, t0.Add(time.Minute), 81),
			},
			[][]string{{"shop", "web", "ClusterSetIP", "member1(1), member2(1)", "PortConflict"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]string
			for _, s := range mcs.Summarize(tc.exports) {
				got = append(got, serviceRow(s))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rows\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
