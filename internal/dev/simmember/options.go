package simmember

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

const defaultStartTimeout = 2 * time.Minute

// SchedulerPluginFactory builds an out-of-tree kube-scheduler plugin. It is
// the same type as k8s.io/kubernetes' frameworkruntime.PluginFactory, spelt
// with staging types only so that plugin packages need not import
// k8s.io/kubernetes. Out-of-tree plugins get nil args: configure them
// through the closure.
type SchedulerPluginFactory = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error)

// Options configures one simulated member cluster. MemberSpec (name,
// topology, node shape) is required and must pass Validate; start from
// DefaultMemberSpec or a fleet loaded with LoadFleet.
type Options struct {
	MemberSpec

	// DataDir holds the member's etcd data and certificates (see
	// controlplane.Options.DataDir). Reusing it restarts the same member
	// with all its objects. Required.
	DataDir string

	// KubeconfigPath is where the member's admin kubeconfig is written,
	// with cluster, user and context all named after the member. Defaults
	// to DataDir/NAME.kubeconfig.
	KubeconfigPath string

	// Logger receives the member's own logs; the upstream components
	// (controllers, scheduler, kwok) log through it with their info
	// messages demoted by two verbosity levels. Defaults to logr.Discard().
	Logger logr.Logger

	// SchedulerPlugins are out-of-tree kube-scheduler plugins by name. Each
	// is registered and enabled at MultiPoint in the default-scheduler
	// profile, after the in-tree plugins; a name clashing with an in-tree
	// plugin makes Start fail.
	SchedulerPlugins map[string]SchedulerPluginFactory

	// APIOnly runs the API server and kwok's Ready nodes only: objects
	// applied to the member are stored, but no controller, scheduler or pod
	// acts on them, and no metrics API is served. It is for measuring the hub against members that, like
	// real ones, have machines of their own (`shepherd bench e2e
	// --members-api-only`), not for trying workloads out.
	APIOnly bool

	// RayOperator makes the member serve RayClusters (ray.io/v1, the CRD
	// RayClusterCRD returns) and run a simulated Ray operator in place of
	// KubeRay: for each RayCluster it keeps the head pod and each worker
	// group's pods, from their pod templates and labelled as KubeRay labels
	// them, so that a RayCluster placed on the member has pods its
	// scheduler binds to nodes. It runs no Ray (see ray.go). With APIOnly
	// the member serves RayClusters but makes no pods.
	RayOperator bool

	// KwokStages are YAML streams of kwok Stage documents
	// (kwok.x-k8s.io/v1alpha1) played beside kwok's default stages, e.g.
	// to keep the pods of one image from ever turning Ready. Where a
	// stage with a weight above 0 and a default stage (weight 0) both
	// match a pod, kwok plays the weighted one.
	KwokStages [][]byte

	// StartTimeout bounds Start (default 2m, generous for a busy 2-core
	// machine; a warm start takes a few seconds).
	StartTimeout time.Duration
}

// complete validates o and returns a copy with defaults applied.
func (o Options) complete() (Options, error) {
	if err := o.MemberSpec.Validate(); err != nil {
		return o, fmt.Errorf("member: invalid spec: %w", err)
	}
	if _, err := loadKwokStages(o.KwokStages); err != nil {
		return o, fmt.Errorf("member: Options.KwokStages: %w", err)
	}
	if o.DataDir == "" {
		return o, errors.New("member: Options.DataDir is required")
	}
	abs, err := filepath.Abs(o.DataDir)
	if err != nil {
		return o, fmt.Errorf("member: resolving data dir %q: %w", o.DataDir, err)
	}
	o.DataDir = abs
	if o.KubeconfigPath == "" {
		o.KubeconfigPath = filepath.Join(o.DataDir, o.Name+".kubeconfig")
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStartTimeout
	}
	return o, nil
}
