package simmember_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestServiceEndpointSlices checks what multi-cluster Services export from
// a member: a Service with a selector gets an EndpointSlice listing the IPs
// of its Running pods as ready endpoints.
func TestServiceEndpointSlices(t *testing.T) {
	testenv.Heavy(t)
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	m := startMember(t, ctx, dataDir, simmember.DefaultFleet(1).Members[0], nil)
	if m == nil {
		t.FailNow()
	}
	// Runs before t.TempDir's removal: etcd must be closed by then.
	t.Cleanup(func() {
		cancel()
		_ = m.Wait()
	})
	c := clientFor(t, m)
	createNamespace(t, c, "svc")
	createDeployment(t, c, "svc", "web", 2)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "demo"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := c.CoreV1().Services("svc").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service: %v", err)
	}

	begin := time.Now()
	waitFor(t, 60*time.Second, func() (bool, string) {
		pods, err := c.CoreV1().Pods("svc").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var podIPs []string
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				podIPs = append(podIPs, p.Status.PodIP)
			}
		}
		slices.Sort(podIPs)
		eps, err := c.DiscoveryV1().EndpointSlices("svc").List(ctx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=web",
		})
		if err != nil {
			return false, err.Error()
		}
		var ready []string
		for _, s := range eps.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					ready = append(ready, e.Addresses...)
				}
			}
		}
		slices.Sort(ready)
		return len(ready) == 2 && slices.Equal(ready, podIPs),
			fmt.Sprintf("%d slices, ready endpoints %v, running pod IPs %v", len(eps.Items), ready, podIPs)
	})
	t.Logf("TIMING EndpointSlice with 2 ready endpoints %s after the Service", time.Since(begin).Round(time.Millisecond))
}
