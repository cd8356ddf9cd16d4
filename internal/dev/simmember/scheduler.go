package simmember

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// startScheduler runs a real kube-scheduler against the member, built the
// way cmd/kube-scheduler's Setup does it from the default component config
// (one default-scheduler profile) but without its command: no flags, no
// secure serving and no leader election, since each member has exactly one
// scheduler. Out-of-tree plugins from Options.SchedulerPlugins are enabled
// at MultiPoint.
//
// It returns once the scheduler's caches and event handlers have synced, so
// that pods created afterwards are scheduled promptly; the scheduler then
// runs on group until ctx ends.
func (m *Member) startScheduler(ctx context.Context, group *sync.WaitGroup, plugins map[string]SchedulerPluginFactory) error {
	ctx = klog.NewContext(ctx, m.upstreamLog.WithName("kube-scheduler"))
	cfg, err := latest.Default()
	if err != nil {
		return fmt.Errorf("defaulting kube-scheduler configuration: %w", err)
	}
	enableAtMultiPoint(cfg.Profiles, slices.Sorted(maps.Keys(plugins)))

	client := m.client("kube-scheduler")
	dynClient, err := dynamic.NewForConfig(m.clientConfig("kube-scheduler"))
	if err != nil {
		return fmt.Errorf("creating kube-scheduler dynamic client: %w", err)
	}
	// The scheduler's pod informer skips terminated pods, so it cannot share
	// the controllers' informers.
	informerFactory := scheduler.NewInformerFactory(client, 0)
	dynInformerFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynClient, 0, corev1.NamespaceAll, nil)
	broadcaster := events.NewEventBroadcasterAdapterWithContext(ctx, m.client("kube-scheduler-events"))

	sched, err := scheduler.New(ctx, client, informerFactory, dynInformerFactory,
		func(name string) events.EventRecorderLogger { return broadcaster.NewRecorder(name) },
		scheduler.WithComponentConfigVersion(cfg.APIVersion),
		scheduler.WithKubeConfig(m.clientConfig("kube-scheduler")),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithFrameworkOutOfTreeRegistry(frameworkruntime.Registry(plugins)),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithParallelism(cfg.Parallelism),
	)
	if err != nil {
		broadcaster.Shutdown()
		return fmt.Errorf("creating kube-scheduler: %w", err)
	}

	broadcaster.StartRecordingToSink(ctx.Done())
	informerFactory.Start(ctx.Done())
	dynInformerFactory.Start(ctx.Done())
	stop := func() {
		informerFactory.Shutdown()
		dynInformerFactory.Shutdown()
		broadcaster.Shutdown()
	}
	informerFactory.WaitForCacheSync(ctx.Done())
	dynInformerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		stop()
		return fmt.Errorf("waiting for kube-scheduler event handlers to sync: %w", err)
	}

	group.Go(func() {
		sched.Run(ctx)
		stop()
	})
	return nil
}

// enableAtMultiPoint appends the named plugins to every profile's
// MultiPoint set, which enables each at all extension points it implements.
func enableAtMultiPoint(profiles []schedulerconfig.KubeSchedulerProfile, names []string) {
	if len(names) == 0 {
		return
	}
	for i := range profiles {
		if profiles[i].Plugins == nil {
			profiles[i].Plugins = &schedulerconfig.Plugins{}
		}
		for _, name := range names {
			profiles[i].Plugins.MultiPoint.Enabled = append(profiles[i].Plugins.MultiPoint.Enabled,
				schedulerconfig.Plugin{Name: name})
		}
	}
}
