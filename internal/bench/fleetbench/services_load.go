package fleetbench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
)

// servicesLoad is the benchmark's Services, exports and endpoint changes,
// all derived from their index so that a run is the same every time.
type servicesLoad struct {
	o       ServicesOptions
	members []servicesMember
	// nextAddress numbers the endpoint addresses handed out: each is
	// used once in a run, so an address seen in a member names the write
	// that put it there.
	nextAddress uint32
	// current holds each export's addresses as last written.
	current map[exportKey][]string
}

// exportKey is export j of Service s.
type exportKey struct{ s, j int }

type servicesMember struct {
	name string
	kube kubernetes.Interface
	mcs  mcsclient.Interface
}

func newServicesLoad(o ServicesOptions, members []*simmember.Member) (*servicesLoad, error) {
	l := &servicesLoad{o: o, current: map[exportKey][]string{}}
	for _, m := range members {
		cfg := m.RestConfig()
		cfg.QPS, cfg.Burst = 500, 1000
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		mc, err := mcsclient.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		l.members = append(l.members, servicesMember{name: m.Name(), kube: kube, mcs: mc})
	}
	return l, nil
}

func (l *servicesLoad) memberNames() []string {
	out := make([]string, len(l.members))
	for i, m := range l.members {
		out[i] = m.name
	}
	return out
}

// namespace and name of Service s.
func (l *servicesLoad) namespace(s int) string { return fmt.Sprintf("mcs-bench-%d", s%l.o.Namespaces) }
func serviceName(s int) string                 { return fmt.Sprintf("svc-%d", s) }

// exporter returns the member index of Service s's export j: consecutive
// members, starting at a different one for each Service, so every member
// exports about as many as any other.
func (l *servicesLoad) exporter(s, j int) int { return (s + j) % len(l.members) }

// address returns a new IPv4 address, never returned before in this run.
func (l *servicesLoad) address() string {
	l.nextAddress++
	n := l.nextAddress
	return fmt.Sprintf("10.%d.%d.%d", 64+(n>>16)&63, (n>>8)&255, n&255)
}

// awaitAPI waits until every member serves the ServiceExport API, which
// joining installs.
func (l *servicesLoad) awaitAPI(ctx context.Context) error {
	for _, m := range l.members {
		err := poll(ctx, func() (bool, error) {
			_, err := m.mcs.MulticlusterV1beta1().ServiceExports("default").List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for %s to serve ServiceExports: %w", m.name, err)
		}
	}
	return nil
}

// createNamespaces creates the Services' namespaces in every member: a
// Service is imported into its own namespace only (namespace sameness),
// which the members' owners create.
func (l *servicesLoad) createNamespaces(ctx context.Context) error {
	for _, m := range l.members {
		for n := range l.o.Namespaces {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: l.namespace(n)}}
			if _, err := m.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating namespace %s in %s: %w", ns.Name, m.name, err)
			}
		}
	}
	return nil
}

// slice is export j of Service s's EndpointSlice, as a member's
// EndpointSlice controller would write it.
func (l *servicesLoad) slice(s, j int, addrs []string) *discoveryv1.EndpointSlice {
	eps := make([]discoveryv1.Endpoint, len(addrs))
	for i, a := range addrs {
		eps[i] = discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: l.namespace(s), Name: serviceName(s) + "-local",
			Labels: map[string]string{discoveryv1.LabelServiceName: serviceName(s), discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}},
	}
}

// expectInitial hands out every export's addresses and tells the tracker
// to expect them in every other member; it returns the keys to wait for.
func (l *servicesLoad) expectInitial(tr *tracker, at time.Time) []string {
	var keys []string
	for s := range l.o.Services {
		for j := range l.o.ExportersPerService {
			var addrs []string
			for range l.o.EndpointsPerSlice {
				a := l.address()
				addrs = append(addrs, a)
				key := tr.expect(l.namespace(s), serviceName(s), l.members[l.exporter(s, j)].name, a)
				tr.started(key, at)
				keys = append(keys, key)
			}
			l.current[exportKey{s, j}] = addrs
		}
	}
	return keys
}

// export creates, in each exporting member, the Service, its slice (with
// the addresses expectInitial handed out) and the ServiceExport, several
// Services at once.
func (l *servicesLoad) export(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(servicesCreators)
	for s := range l.o.Services {
		for j := range l.o.ExportersPerService {
			addrs := l.current[exportKey{s, j}]
			g.Go(func() error { return l.exportOne(gctx, s, j, addrs) })
		}
	}
	return g.Wait()
}

func (l *servicesLoad) exportOne(ctx context.Context, s, j int, addrs []string) error {
	m := l.members[l.exporter(s, j)]
	ns, name := l.namespace(s), serviceName(s)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}},
	}
	if _, err := m.kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Service %s/%s in %s: %w", ns, name, m.name, err)
	}
	if _, err := m.kube.DiscoveryV1().EndpointSlices(ns).Create(ctx, l.slice(s, j, addrs), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the EndpointSlice of %s/%s in %s: %w", ns, name, m.name, err)
	}
	se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if _, err := m.mcs.MulticlusterV1beta1().ServiceExports(ns).Create(ctx, se, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating ServiceExport %s/%s in %s: %w", ns, name, m.name, err)
	}
	return nil
}

// change makes the run's endpoint changes at their rate: change k moves
// the first endpoint of one export of one Service to a new address, the
// Services visited in a fixed stride so that consecutive changes touch
// different Services and members. It returns the keys to wait for.
func (l *servicesLoad) change(ctx context.Context, tr *tracker) ([]string, error) {
	every := time.Duration(float64(time.Second) / l.o.ChangesPerSecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	keys := make([]string, 0, l.o.Changes)
	// Changes of one export are written in order, each after the one
	// before: a merge patch replaces the whole list of endpoints.
	previous := map[exportKey]chan struct{}{}
	g, gctx := errgroup.WithContext(ctx)
	for k := range l.o.Changes {
		s := (k * 7919) % l.o.Services
		j := k % l.o.ExportersPerService
		m := l.members[l.exporter(s, j)]
		ek := exportKey{s, j}
		addrs := append([]string{l.address()}, l.current[ek][1:]...)
		l.current[ek] = addrs
		patch, err := json.Marshal(map[string]any{"endpoints": l.slice(s, j, addrs).Endpoints})
		if err != nil {
			return nil, err
		}
		key := tr.expectChange(l.namespace(s), serviceName(s), m.name, addrs[0])
		keys = append(keys, key)
		after, done := previous[ek], make(chan struct{})
		previous[ek] = done
		g.Go(func() error {
			defer close(done)
			if after != nil {
				<-after
			}
			tr.started(key, time.Now())
			_, err := m.kube.DiscoveryV1().EndpointSlices(l.namespace(s)).Patch(gctx, serviceName(s)+"-local", types.MergePatchType, patch, metav1.PatchOptions{})
			if err != nil {
				return fmt.Errorf("changing the endpoints of %s/%s in %s: %w", l.namespace(s), serviceName(s), m.name, err)
			}
			return nil
		})
		select {
		case <-gctx.Done():
			return nil, g.Wait()
		case <-tick.C:
		}
	}
	return keys, g.Wait()
}
