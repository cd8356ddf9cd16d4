package fleetbench

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestHeapGrowth(t *testing.T) {
	for _, tc := range []struct {
		heaps []uint64
		want  float64
	}{
		{nil, 0},
		{[]uint64{100}, 0},
		{[]uint64{100, 300, 110}, 0.1},
		{[]uint64{200, 100}, -0.5},
		{[]uint64{0, 100}, 0},
		// A first sample taken while the caches fill no longer flatters
		// a leak: the baseline is the median of the first quarter (here
		// 200, 100, 110: 110), so the growth to 150 reads +36 %, not -25 %.
		{[]uint64{200, 100, 110, 120, 130, 135, 140, 142, 144, 146, 148, 150}, 150.0/110 - 1},
	} {
		var s []SoakSample
		for _, h := range tc.heaps {
			s = append(s, SoakSample{LiveHeapBytes: h})
		}
		if got := heapGrowth(s); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("heapGrowth(%v) = %g, want %g", tc.heaps, got, tc.want)
		}
	}
}

// The churn is drawn from the seed: the same seed, the same changes, and
// every kind of change comes up.
func TestNextOpIsSeeded(t *testing.T) {
	draw := func(seed uint64) []churnOp {
		r := rand.New(rand.NewPCG(seed, seed^0x50a4))
		out := make([]churnOp, 200)
		for i := range out {
			out[i] = nextOp(r)
		}
		return out
	}
	a, b := draw(7), draw(7)
	counts := map[churnOp]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 draws %v then %v at %d", a[i], b[i], i)
		}
		counts[a[i]]++
	}
	for _, op := range []churnOp{opScale, opEditImage, opRecreate} {
		if counts[op] == 0 {
			t.Errorf("200 draws never give op %d: %v", op, counts)
		}
	}
}

// A scale is timed once its binding is Scheduled with the new replicas,
// not before.
func TestScaleWatch(t *testing.T) {
	w := &scaleWatch{pending: map[string]scaleWant{}}
	w.expect("app-1", 3, time.Now().Add(-time.Second))
	binding := func(replicas int32, scheduled bool, targets ...int32) *workv1alpha1.ResourceBinding {
		b := &workv1alpha1.ResourceBinding{}
		b.Spec.Resource.Name, b.Spec.Replicas = "app-1", replicas
		for i, r := range targets {
			b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha1.TargetCluster{Name: string(rune('a' + i)), Replicas: r})
		}
		if scheduled {
			b.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ConditionScheduled, Status: metav1.ConditionTrue}}
		}
		return b
	}
	w.observe(binding(2, true, 1, 1)) // the old replicas
	w.observe(binding(3, true, 1, 1)) // new spec, old placement
	w.observe(binding(3, false, 2, 1))
	if got := w.take(); len(got) != 0 {
		t.Fatalf("timed before the binding was scheduled with 3: %v", got)
	}
	w.observe(binding(3, true, 2, 1))
	w.observe(binding(3, true, 2, 1)) // once only
	if got := w.take(); len(got) != 1 || got[0] < time.Second {
		t.Fatalf("want one latency of at least 1s, got %v", got)
	}
}

func TestSoakRejectsBadSizes(t *testing.T) {
	for _, o := range []SoakOptions{
		{Workloads: 0, Policies: 1, SimulatedPullClusters: 2, Duration: time.Second, ChurnPerSecond: 1},
		{Workloads: 1, Policies: 1, SimulatedPullClusters: 1, Duration: time.Second, ChurnPerSecond: 1},
		{Workloads: 1, Policies: 1, SimulatedPullClusters: 2, Duration: 0, ChurnPerSecond: 1},
		{Workloads: 1, Policies: 1, SimulatedPullClusters: 2, Duration: time.Second, ChurnPerSecond: 0},
	} {
		if _, err := Soak(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--simulated-pull-clusters of at least 2") {
			t.Errorf("%+v: want a size error naming the flags, got %v", o, err)
		}
	}
	for _, o := range []SoakOptions{
		{Workloads: 1, Policies: 1, SimulatedPullClusters: 2, Duration: time.Second, ChurnPerSecond: 1, Samples: -1},
		{Workloads: 1, Policies: 1, SimulatedPullClusters: 2, Duration: time.Second, ChurnPerSecond: 1, MaxHeapGrowth: -0.1},
		{Workloads: 1, Policies: 1, SimulatedPullClusters: 2, Duration: time.Second, ChurnPerSecond: 1, ChurnWriters: -1},
	} {
		if _, err := Soak(context.Background(), o); err == nil || !strings.Contains(err.Error(), "may not be negative") {
			t.Errorf("%+v: want an error naming --samples and --max-heap-growth, got %v", o, err)
		}
	}
}

// TestSoakSmall runs a short soak end to end (on the package's shared
// fleet, its workloads on its own simulated clusters): the churn happens, samples
// are taken, and the fleet converges with no invariant broken.
func TestSoakSmall(t *testing.T) {
	ctx, where := onShared(t, "soak")
	o := SoakOptions{Duration: 20 * time.Second, Workloads: 30, Policies: 3, SimulatedPullClusters: 4, ChurnPerSecond: 5, Samples: 4, Seed: 1}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	rep, err := soak(ctx, o, where)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) > 0 {
		t.Errorf("violations: %v", rep.Violations)
	}
	if len(rep.Samples) < 4 {
		t.Errorf("%d samples, want at least 4", len(rep.Samples))
	}
	last := rep.Samples[len(rep.Samples)-1]
	if last.Changes < 20 || last.Goroutines == 0 || last.LiveHeapBytes == 0 {
		t.Errorf("the churn or the sampling did not happen: %+v", last)
	}
	if rep.ChurnWriters != DefaultChurnWriters || rep.AchievedChurnPerSecond <= 0 {
		t.Errorf("the churn's writers and rate are not reported: %d writers, %.1f/s", rep.ChurnWriters, rep.AchievedChurnPerSecond)
	}
	t.Logf("%+v", *rep)
}

// TestOverloaded: the hub refusing for load is skipped by the churn;
// anything else ends the soak.
func TestOverloaded(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"etcd timed out (500)", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "update", 1), true},
		{"timeout", apierrors.NewTimeoutError("slow", 1), true},
		{"too many requests", apierrors.NewTooManyRequests("busy", 1), true},
		{"unavailable", apierrors.NewServiceUnavailable("down"), true},
		{"conflict", apierrors.NewConflict(gr, "app-1", errors.New("changed")), false},
		{"forbidden", apierrors.NewForbidden(gr, "app-1", errors.New("no")), false},
		{"invalid", apierrors.NewBadRequest("bad"), false},
	} {
		if got := overloaded(tc.err); got != tc.want {
			t.Errorf("%s: overloaded = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCreateLoaded: a creation the hub refuses for load is tried again
// (and found stored counts as done); any other refusal ends it at once.
func TestCreateLoaded(t *testing.T) {
	loadedRetryStart = time.Millisecond
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	timeout := apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	exists := apierrors.NewAlreadyExists(gr, "app-1")
	for _, tc := range []struct {
		name        string
		answers     []error // the hub's answers, in order; then success
		wantRefused int
		wantErr     bool
	}{
		{name: "created", wantRefused: 0},
		{name: "timed out twice, then created", answers: []error{timeout, timeout}, wantRefused: 2},
		{name: "timed out but stored", answers: []error{timeout, exists}, wantRefused: 1},
		{name: "exists from the start", answers: []error{exists}, wantErr: true},
		{name: "forbidden", answers: []error{apierrors.NewForbidden(gr, "app-1", errors.New("no"))}, wantErr: true},
		{name: "throttled, then forbidden", answers: []error{apierrors.NewTooManyRequests("busy", 1), apierrors.NewForbidden(gr, "app-1", errors.New("no"))}, wantRefused: 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					calls++
					if calls <= len(tc.answers) {
						return tc.answers[calls-1]
					}
					return c.Create(ctx, obj, opts...)
				},
			}).Build()
			refused, err := createLoaded(context.Background(), c, deployment("soak", 1, 0, 2))
			if refused != tc.wantRefused || (err != nil) != tc.wantErr {
				t.Errorf("refused %d, err %v; want %d refusals, error %v", refused, err, tc.wantRefused, tc.wantErr)
			}
		})
	}
}

// TestOtherReplicas: a scale always changes the count, within 1..4, and
// reaches every other value.
func TestOtherReplicas(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for cur := int32(1); cur <= 4; cur++ {
		seen := map[int32]bool{}
		for range 200 {
			n := otherReplicas(r, cur)
			if n == cur || n < 1 || n > 4 {
				t.Fatalf("otherReplicas(%d) = %d, want 1..4 other than %d", cur, n, cur)
			}
			seen[n] = true
		}
		if len(seen) != 3 {
			t.Errorf("otherReplicas(%d) drew %v, want each of the three other values", cur, seen)
		}
	}
}

// TestScaleWatchForget: a scale whose workload was re-created before it
// was scheduled is not timed.
func TestScaleWatchForget(t *testing.T) {
	w := &scaleWatch{pending: map[string]scaleWant{}}
	b := &workv1alpha1.ResourceBinding{}
	b.Spec.Resource.Name, b.Spec.Replicas = "app-1", 2
	b.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "a", Replicas: 2}}
	b.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ConditionScheduled, Status: metav1.ConditionTrue}}
	w.expect("app-1", 2, time.Now())
	w.forget("app-1")
	w.observe(b)
	if got := w.take(); len(got) != 0 {
		t.Fatalf("timed a forgotten scale: %v", got)
	}
}
