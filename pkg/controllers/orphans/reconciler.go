package orphans

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// Reconciler sweeps one member per reconcile.
type Reconciler struct {
	client client.Client
	// reader reads Works from the API server: an orphan is proven from
	// stored state, never from a cache that may be behind.
	reader      client.Reader
	clients     *clusterclient.Cache
	fence       func() error
	recorder    events.EventRecorder
	pullCluster string
	opts        Options

	mu sync.Mutex
	// seen holds, per cluster, the orphans of the last sweep (object.key);
	// a cluster without an entry has not been swept since this process
	// started.
	seen map[string]map[string]bool
	// md holds a metadata client per member configuration.
	md map[*rest.Config]metadata.Interface
}

func newReconciler(d controllerdeps.Deps, opts Options) *Reconciler {
	r := &Reconciler{client: d.Client(), reader: d.Manager.GetAPIReader(), clients: d.Clients, fence: d.Fence,
		pullCluster: d.PullCluster, opts: opts, seen: map[string]map[string]bool{}, md: map[*rest.Config]metadata.Interface{}}
	if !d.Agent() {
		// An agent may not write events outside its namespace.
		r.recorder = d.Recorder(ControllerName)
	}
	return r
}

// Reconcile sweeps the member of the Cluster req names, when this process
// serves it, and comes back after the period.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !r.serves(cluster) || !cluster.DeletionTimestamp.IsZero() {
		r.forget(cluster.Name)
		return reconcile.Result{}, nil
	}
	next := reconcile.Result{RequeueAfter: r.opts.Period}
	if r.firstSight(cluster.Name) {
		// The first sweep comes a period after start, not with every
		// controller's start-up work (and a fleet's worth of lists).
		return next, nil
	}
	if ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady); ready == nil || ready.Status != metav1.ConditionTrue {
		return next, nil // a member that does not answer is swept when it does
	}
	begin := time.Now()
	defer func() { sweepDuration.Observe(time.Since(begin).Seconds()) }()
	if err := r.sweep(ctx, cluster); err != nil {
		logr.FromContextOrDiscard(ctx).Info("orphan sweep incomplete; the next one tries again", "cluster", cluster.Name, "err", err.Error())
	}
	return next, nil
}

// serves: the hub sweeps Push members, an agent its own.
func (r *Reconciler) serves(c *clusterv1alpha1.Cluster) bool {
	if r.pullCluster != "" {
		return c.Name == r.pullCluster
	}
	return c.Spec.SyncMode != clusterv1alpha1.Pull
}

// firstSight reports whether cluster is seen for the first time since
// start (and records it).
func (r *Reconciler) firstSight(cluster string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[cluster]; ok {
		return false
	}
	r.seen[cluster] = map[string]bool{}
	return true
}

func (r *Reconciler) forget(cluster string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, cluster)
}

// sweep lists the member's objects Shepherd labelled, the Works of the
// cluster's execution namespace, and removes the orphans seen twice.
func (r *Reconciler) sweep(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	clients, err := r.clients.ForCluster(ctx, cluster)
	if err != nil {
		return err
	}
	md, err := r.metadataClient(clients.Config)
	if err != nil {
		return err
	}
	objs, listErr := list(ctx, clients, md)
	works := &workv1alpha1.WorkList{}
	if err := r.reader.List(ctx, works, client.InNamespace(names.ExecutionNamespace(cluster.Name))); err != nil {
		return fmt.Errorf("listing the Works of %s: %w", cluster.Name, err)
	}
	stored := make(map[string]bool, len(works.Items))
	for _, w := range works.Items {
		stored[w.Name] = true
	}
	r.mu.Lock()
	remove, seen := confirm(r.seen[cluster.Name], orphans(cluster.Name, objs, stored))
	r.seen[cluster.Name] = seen
	r.mu.Unlock()
	for _, o := range remove {
		if r.fence != nil {
			if err := r.fence(); err != nil {
				return err
			}
		}
		if err := deleteUnchanged(ctx, md, o); err != nil {
			return err
		}
		removed.WithLabelValues(cluster.Name).Inc()
		logr.FromContextOrDiscard(ctx).Info("removed an orphan: its Work is gone", "cluster", cluster.Name,
			"resource", o.Resource.String(), "object", strings.TrimPrefix(o.Namespace+"/"+o.Name, "/"), "work", o.Work)
		if r.recorder != nil {
			r.recorder.Eventf(cluster, nil, "Normal", "OrphanRemoved", "Sweep", "Removed %s %s from %s: the Work %s that applied it is gone",
				o.Resource.Resource, strings.TrimPrefix(o.Namespace+"/"+o.Name, "/"), cluster.Name, o.Work)
		}
	}
	return listErr
}

// deleteUnchanged deletes o if it is still the object the sweep saw (same
// UID and resourceVersion): one taken over, edited or replaced since stays.
func deleteUnchanged(ctx context.Context, md metadata.Interface, o object) error {
	uid, rv := o.UID, o.ResourceVersion
	background := metav1.DeletePropagationBackground
	err := md.Resource(o.Resource).Namespace(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, PropagationPolicy: &background})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func (r *Reconciler) metadataClient(cfg *rest.Config) (metadata.Interface, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if md, ok := r.md[cfg]; ok {
		return md, nil
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r.md[cfg] = md
	return md, nil
}

// list reads the metadata of every object Shepherd labelled in the member,
// of every kind the member serves that may be listed and deleted (one
// request per kind, filtered by the member's API server), but the kinds
// Shepherd never propagates. What it could not list is returned with an
// error; what it could is returned too.
func list(ctx context.Context, clients *clusterclient.Clients, md metadata.Interface) ([]object, error) {
	lists, discoveryErr := clients.Kubernetes.Discovery().ServerPreferredResources()
	var out []object
	var errs []string
	if discoveryErr != nil {
		errs = append(errs, discoveryErr.Error())
	}
	selector := workv1alpha1.LabelManagedBy + "=" + workv1alpha1.ManagedByShepherd
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") || !slices.Contains(res.Verbs, "list") || !slices.Contains(res.Verbs, "delete") ||
				resourceselector.ExcludedKind(schema.GroupKind{Group: gv.Group, Kind: res.Kind}) {
				continue
			}
			gvr := gv.WithResource(res.Name)
			items, err := md.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", gvr, err))
				continue
			}
			for _, it := range items.Items {
				w := it.Annotations[workv1alpha1.AnnotationWork]
				if w == "" {
					continue
				}
				out = append(out, object{Resource: gvr, Namespace: it.Namespace, Name: it.Name, UID: it.UID, ResourceVersion: it.ResourceVersion, Work: w})
			}
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("listing the member's objects: %s", strings.Join(errs, "; "))
	}
	return out, nil
}
