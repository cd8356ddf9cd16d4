package fleetbench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// The kubefleet scenario. A KubeFleet placement selects a namespace and
// carries everything in it; in Shepherd each placement is a namespace of
// its own holding a PropagationPolicy that names the ConfigMap and the
// Deployment, so each object has a binding and a Work per cluster, and the
// namespace travels with them: the member's agent creates it with the
// first object, and it has no Work (WorksPerPair says what that comes to).
// The policy picks its clusters as a KubeFleet user would, by label: the
// simulated clusters are labelled in groups of ClustersPerPlacement, in
// order of their names, and placement p picks group p mod the groups.
//
// KubeFleet's rollouts have three stages, of 20, 30 and 50 % of a
// placement's clusters, each updating at most half of its clusters at once,
// with no approval or wait. Shepherd's Staged rollout takes the stages as
// they are (a label per stage, waitSeconds 0, no approval,
// minSuccessSeconds 0: a cluster is done once healthy), but its
// maxConcurrency is one number for every stage, counted on the placement's
// clusters: 20 %. That is KubeFleet's limit averaged over the clusters
// (10 of 20, 15 of 30, 25 of 50: 19 %), and it takes as many waves in all:
// 1 + 2 + 3 where KubeFleet takes 2 + 2 + 2.

// kubeFleetMaxConcurrency is the rollouts' maxConcurrency (see above).
const kubeFleetMaxConcurrency = "20%"

// peerGroupLabel puts a simulated cluster in the group a placement picks.
const peerGroupLabel = "bench.shepherd.io/group"

// kubeFleetStageEnds are where KubeFleet's stages end in a group, in
// tenths of it: the first 20 %, the next 30 %, the last 50 %.
var kubeFleetStageEnds = [...]int{2, 5, 10}

// clusterGroup is the group of cluster i when groups of size take the
// clusters in order; -1 for a cluster left over.
func clusterGroup(i, clusters, size int) int {
	if g := i / size; g < clusters/size {
		return g
	}
	return -1
}

// placementGroup is the group placement p picks: the groups in turn.
func placementGroup(p, clusters, size int) int { return p % (clusters / size) }

// stageInGroup is the stage of the j-th cluster of a group of size.
func stageInGroup(j, size int) int {
	for s, end := range kubeFleetStageEnds {
		if j*10 < end*size {
			return s
		}
	}
	return len(kubeFleetStageEnds) - 1
}

func groupName(g int) string { return fmt.Sprintf("group-%04d", g+1) }

// placementNamespace holds placement p of run.
func placementNamespace(run string, p int) string { return fmt.Sprintf("%s-%04d", run, p+1) }

// kubeFleetLabels are the labels of simulated cluster i of run.
func kubeFleetLabels(run string, o KubeFleetOptions) func(i int) map[string]string {
	return func(i int) map[string]string {
		l := map[string]string{runLabel: run}
		if g := clusterGroup(i, o.Clusters, o.ClustersPerPlacement); g >= 0 {
			l[peerGroupLabel] = groupName(g)
			l[rolloutStageLabel] = stageName(stageInGroup(i%o.ClustersPerPlacement, o.ClustersPerPlacement))
		}
		return l
	}
}

// KubeFleetReport is what one run of the kubefleet scenario measured.
type KubeFleetReport struct {
	Clusters             int `json:"clusters"`
	Placements           int `json:"placements"`
	ClustersPerPlacement int `json:"clustersPerPlacement"`
	Rollouts             int `json:"rollouts"`
	// RegisterSeconds is registering the simulated clusters (before the
	// placements).
	RegisterSeconds float64 `json:"registerSeconds"`
	// CreateSeconds is creating every placement's objects, sixteen
	// placements at a time; PlacedSeconds runs from the first one created
	// until every placement was done.
	CreateSeconds float64 `json:"createSeconds"`
	PlacedSeconds float64 `json:"placedSeconds"`
	// Placement latency: from the creation of a placement's first object
	// until both its bindings are Scheduled and each of its Works is
	// applied, as percentiles over the placements.
	PlacementP50Seconds float64 `json:"placementP50Seconds"`
	PlacementP90Seconds float64 `json:"placementP90Seconds"`
	PlacementMaxSeconds float64 `json:"placementMaxSeconds"`
	// WorksPerPair are the run's Works per placement–cluster pair.
	WorksPerPair float64 `json:"worksPerPair"`
	// Footprint is read once every placement was done; the PerPair bytes
	// are etcd's growth since before the first placement, per
	// placement–cluster pair.
	Footprint
	EtcdAllocatedBytesPerPair float64 `json:"etcdAllocatedBytesPerPair"`
	EtcdInUseBytesPerPair     float64 `json:"etcdInUseBytesPerPair"`
	// RolloutAloneSeconds is one placement's change of image, alone: from
	// the edit of its Deployment until its binding's rollout is Complete.
	RolloutAloneSeconds float64 `json:"rolloutAloneSeconds"`
	// Concurrent*Seconds are Rollouts placements changed at once: each
	// one's time as RolloutAloneSeconds, as percentiles, and all of them
	// from the first edit until the last was Complete.
	ConcurrentP50Seconds float64 `json:"concurrentP50Seconds"`
	ConcurrentP90Seconds float64 `json:"concurrentP90Seconds"`
	ConcurrentMaxSeconds float64 `json:"concurrentMaxSeconds"`
	ConcurrentAllSeconds float64 `json:"concurrentAllSeconds"`
	// Restart follows the rollouts.
	Restart
}

// RunKubeFleet starts the hub and the controllers, and runs the kubefleet
// scenario on simulated Pull clusters.
func RunKubeFleet(ctx context.Context, o KubeFleetOptions) (*KubeFleetReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return onOwnFleet(ctx, o.Logger, "kubefleet", func(ctx context.Context, where on) (*KubeFleetReport, error) { return kubeFleet(ctx, o, where) })
}

// kubeFleet runs the scenario on the fleet of where; o is valid.
func kubeFleet(ctx context.Context, o KubeFleetOptions, where on) (*KubeFleetReport, error) {
	log := o.Logger
	rep := &KubeFleetReport{Clusters: o.Clusters, Placements: o.Placements, ClustersPerPlacement: o.ClustersPerPlacement, Rollouts: o.Rollouts}
	// KubeFleet's Deployments have no replicas.
	run, took, err := startPeer(ctx, where, o.Clusters, 0, kubeFleetLabels(where.ns, o), log)
	if err != nil {
		return nil, err
	}
	rep.RegisterSeconds = took
	admin, hub, pl := run.admin, run.hub, run.pl
	nss := make([]string, o.Placements)
	for p := range nss {
		nss[p] = placementNamespace(where.ns, p)
		pl.expect(nss[p], 2, 2*o.ClustersPerPlacement)
	}
	before := storageOf(where)
	log.Info("creating the placements", "placements", o.Placements, "clustersPerPlacement", o.ClustersPerPlacement)
	begin := time.Now()
	started := make([]time.Time, o.Placements)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(creators)
	for p := range nss {
		g.Go(func() error {
			started[p] = time.Now()
			return createPlacement(gctx, hub, nss[p], where.ns, o, p)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rep.CreateSeconds = time.Since(begin).Seconds()
	if err := pl.waitDone(ctx, nss, o.Timeout); err != nil {
		return nil, err
	}
	rep.PlacedSeconds = time.Since(begin).Seconds()
	latencies := make([]time.Duration, o.Placements)
	for p, ns := range nss {
		latencies[p] = pl.doneAt(ns).Sub(started[p])
	}
	rep.PlacementP50Seconds, rep.PlacementP90Seconds, rep.PlacementMaxSeconds = durationStats(latencies)
	pairs := o.Placements * o.ClustersPerPlacement
	rep.WorksPerPair = float64(pl.worksIn(nss)) / float64(pairs)
	rep.EtcdAllocatedBytesPerPair, rep.EtcdInUseBytesPerPair = storageOf(where).per(before, pairs)
	if rep.Footprint, err = footprint(where); err != nil {
		return nil, err
	}

	log.Info("rolling out a new image to one placement")
	alone, _, err := rollOut(ctx, hub, pl, nss[:1], peerImage(2), o)
	if err != nil {
		return nil, err
	}
	rep.RolloutAloneSeconds = alone[0].Seconds()
	log.Info("rolling out a new image to several placements at once", "rollouts", o.Rollouts)
	each, all, err := rollOut(ctx, hub, pl, nss[:o.Rollouts], peerImage(3), o)
	if err != nil {
		return nil, err
	}
	rep.ConcurrentP50Seconds, rep.ConcurrentP90Seconds, rep.ConcurrentMaxSeconds = durationStats(each)
	rep.ConcurrentAllSeconds = all.Seconds()
	if rep.Restart, err = restart(ctx, where, admin, pl, o.Quiet, o.Timeout, log); err != nil {
		return nil, err
	}
	return rep, nil
}

// createPlacement creates placement p in namespace ns: the namespace, the
// policy, then the objects it carries, so that the detector binds each as
// it comes.
func createPlacement(ctx context.Context, hub client.Client, ns, run string, o KubeFleetOptions, p int) error {
	dep := deployment(ns, 0, p, 0)
	dep.Spec.Template.Spec.Containers[0].Image = peerImage(1)
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		kubeFleetPolicy(ns, run, o, p),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"settings": strings.Repeat("x", 1024)}},
		dep,
	} {
		if err := hub.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating the %T of placement %d: %w", obj, p+1, err)
		}
	}
	return nil
}

// kubeFleetPolicy places the ConfigMap and the Deployment of namespace ns
// on the group of placement p, rolled out in KubeFleet's three stages.
func kubeFleetPolicy(ns, run string, o KubeFleetOptions, p int) *policyv1alpha1.PropagationPolicy {
	stages := make([]policyv1alpha1.RolloutStage, len(kubeFleetStageEnds))
	for s := range stages {
		stages[s] = policyv1alpha1.RolloutStage{Name: stageName(s), ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{rolloutStageLabel: stageName(s)}}}
	}
	group := groupName(placementGroup(p, o.Clusters, o.ClustersPerPlacement))
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "placement"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "app-0"},
			},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{runLabel: run, peerGroupLabel: group}}}},
			Rollout: &policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutStaged, MaxConcurrency: ptr.To(intstr.FromString(kubeFleetMaxConcurrency)), Stages: stages},
		},
	}
}

// rollOut changes the image of the Deployment of each namespace of nss at
// once, and waits until each binding's rollout of it is Complete on the
// placement's clusters: each one's time from its edit, and all of them
// from the first edit until the last was Complete.
func rollOut(ctx context.Context, hub client.Client, r client.Reader, nss []string, image string, o KubeFleetOptions) ([]time.Duration, time.Duration, error) {
	// The revision each runs now, complete (the first goes everywhere at
	// once, without stages), so that the wait below is for the change.
	prev := make([]string, len(nss))
	for i, ns := range nss {
		b, err := waitComplete(ctx, r, deploymentBinding(ns), "", o.ClustersPerPlacement, o.Timeout)
		if err != nil {
			return nil, 0, fmt.Errorf("the revision of %s before the change: %w", ns, err)
		}
		prev[i] = b.Status.Rollout.Revision
	}
	patch := client.RawPatch(types.StrategicMergePatchType, fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image))
	took := make([]time.Duration, len(nss))
	begin := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for i, ns := range nss {
		g.Go(func() error {
			start := time.Now()
			if err := hub.Patch(gctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-0"}}, patch); err != nil {
				return fmt.Errorf("changing the image of %s: %w", ns, err)
			}
			if _, err := waitComplete(gctx, r, deploymentBinding(ns), prev[i], o.ClustersPerPlacement, o.Timeout); err != nil {
				return fmt.Errorf("the rollout of %s: %w", ns, err)
			}
			took[i] = time.Since(start)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	return took, time.Since(begin), nil
}

func deploymentBinding(ns string) client.ObjectKey {
	return client.ObjectKey{Namespace: ns, Name: names.BindingName("Deployment", "app-0")}
}
