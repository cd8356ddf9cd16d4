package fleetbench

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// The karmada-startup scenario: Workloads Deployments, each mounting a
// ConfigMap of its own, under one policy with propagateDeps (as a Karmada
// user declares the dependency), on every simulated cluster. Each
// Deployment has its binding and each ConfigMap an attached one (see
// docs/propagation.md#dependencies), each with a Work per cluster. Once
// every Work is applied, the controller manager is restarted and timed
// until it has caught up (catchup.go).

// KarmadaStartupReport is what one run of the karmada-startup scenario
// measured.
type KarmadaStartupReport struct {
	Workloads int `json:"workloads"`
	Clusters  int `json:"clusters"`
	// RegisterSeconds is registering the simulated clusters.
	RegisterSeconds float64 `json:"registerSeconds"`
	// CreateSeconds is creating the Deployments and their ConfigMaps,
	// sixteen at a time; PlacedSeconds runs from the first created until
	// every Deployment's binding was Scheduled and every Work applied.
	CreateSeconds float64 `json:"createSeconds"`
	PlacedSeconds float64 `json:"placedSeconds"`
	// Works are the run's: the Deployments' and the ConfigMaps', per
	// cluster.
	Works int `json:"works"`
	// Footprint is read once every Work was applied.
	Footprint
	// Restart ends the run.
	Restart
}

// RunKarmadaStartup starts the hub and the controllers, and runs the
// karmada-startup scenario on simulated Pull clusters.
func RunKarmadaStartup(ctx context.Context, o KarmadaStartupOptions) (*KarmadaStartupReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return onOwnFleet(ctx, o.Logger, "karmada-startup", func(ctx context.Context, where on) (*KarmadaStartupReport, error) {
		return karmadaStartup(ctx, o, where)
	})
}

// karmadaStartup runs the scenario on the fleet of where; o is valid.
func karmadaStartup(ctx context.Context, o KarmadaStartupOptions, where on) (*KarmadaStartupReport, error) {
	log := o.Logger
	rep := &KarmadaStartupReport{Workloads: o.Workloads, Clusters: o.Clusters}
	// Every cluster runs a replica of every workload.
	run, took, err := startPeer(ctx, where, o.Clusters, o.Workloads, func(int) map[string]string { return map[string]string{runLabel: where.ns} }, log)
	if err != nil {
		return nil, err
	}
	rep.RegisterSeconds = took
	admin, hub, pl := run.admin, run.hub, run.pl
	ns := where.ns
	// The ConfigMaps' bindings are attached: never scheduled.
	pl.expect(ns, o.Workloads, 2*o.Workloads*o.Clusters)
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	if err := hub.Create(ctx, karmadaPolicy(ns)); err != nil {
		return nil, fmt.Errorf("creating the policy: %w", err)
	}
	log.Info("creating the workloads and their ConfigMaps", "workloads", o.Workloads)
	begin := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(creators)
	for w := range o.Workloads {
		g.Go(func() error { return createWorkload(gctx, hub, ns, w) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rep.CreateSeconds = time.Since(begin).Seconds()
	if err := pl.waitDone(ctx, []string{ns}, o.Timeout); err != nil {
		return nil, err
	}
	rep.PlacedSeconds = time.Since(begin).Seconds()
	rep.Works = pl.worksIn([]string{ns})
	if rep.Footprint, err = footprint(where); err != nil {
		return nil, err
	}
	if rep.Restart, err = restart(ctx, where, admin, pl, o.Quiet, o.Timeout, log); err != nil {
		return nil, err
	}
	return rep, nil
}

// createWorkload creates workload w: its ConfigMap first, so that the
// Deployment's dependency is there when it is bound.
func createWorkload(ctx context.Context, hub client.Client, ns string, w int) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("config-%d", w)}, Data: map[string]string{"app.properties": "mode=bench\n"}}
	dep := deployment(ns, w, 0, 1)
	dep.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}}
	for _, obj := range []client.Object{cm, dep} {
		if err := hub.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating the %T of workload %d: %w", obj, w, err)
		}
	}
	return nil
}

// karmadaPolicy places every Deployment of ns, and what each depends on,
// on every simulated cluster of the run.
func karmadaPolicy(ns string) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workloads"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			PropagateDeps:     true,
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{runLabel: ns}}}},
		},
	}
}
