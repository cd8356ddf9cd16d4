package serviceimport

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/execns"
	"github.com/shepherd-io/shepherd/pkg/mcs/memberapi"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// The Works that carry the MCS API to a member. The CRDs and the
// ClusterProperties are two Works: a Work's objects are applied in order
// but a CRD must be served before objects of its kind can be, so the
// properties' Work simply retries until then.
const (
	WorkMemberAPI         = "multicluster-api"
	WorkClusterProperties = "multicluster-cluster-properties"
)

// memberAPIReconciler gives each member of the ClusterSet the MCS API. A
// member that already has the CRDs (another MCS implementation installed
// them) keeps its own: the execution controller does not take over objects
// Shepherd did not create, and reports the Work's conflict instead.
//
// Its Works preserve their objects when they go (a cluster that leaves the
// ClusterSet or the fleet): deleting a CRD deletes every object of its
// kind, the ServiceExports a member team wrote among them, so Shepherd
// releases the CRDs rather than remove them.
type memberAPIReconciler struct {
	client     client.Client
	clusterSet string
	selector   labels.Selector
}

func (r *memberAPIReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil // the cluster's Works go with it
	}
	if !inClusterSet(r.selector, cluster) {
		return reconcile.Result{}, r.removeMemberAPI(ctx, cluster.Name)
	}
	apiManifests, propManifests, err := memberAPIManifests(cluster.Name, r.clusterSet)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := execns.Ensure(ctx, r.client, cluster.Name); err != nil {
		return reconcile.Result{}, err
	}
	ns := names.ExecutionNamespace(cluster.Name)
	im := &Reconciler{client: r.client}
	if err := im.ensureWork(ctx, ns, WorkMemberAPI, map[string]string{LabelMemberAPI: "true"}, apiManifests, manifestsHash(apiManifests), true); err != nil {
		return reconcile.Result{}, err
	}
	// The properties wait for their CRD: sent earlier, their Work would
	// fail (and log) until the member serves the kind.
	api := &workv1alpha1.Work{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: WorkMemberAPI}, api); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !meta.IsStatusConditionTrue(api.Status.Conditions, workv1alpha1.WorkConditionApplied) {
		return reconcile.Result{}, nil // the Work's status change brings this back
	}
	if err := im.ensureWork(ctx, ns, WorkClusterProperties, map[string]string{LabelMemberAPI: "true"}, propManifests, manifestsHash(propManifests), true); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// removeMemberAPI removes the MCS API Works of a cluster that left the
// ClusterSet (its labels no longer match): what they applied leaves the
// member with them.
func (r *memberAPIReconciler) removeMemberAPI(ctx context.Context, cluster string) error {
	for _, name := range []string{WorkClusterProperties, WorkMemberAPI} {
		w := &workv1alpha1.Work{}
		err := r.client.Get(ctx, client.ObjectKey{Namespace: names.ExecutionNamespace(cluster), Name: name}, w)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if w.Labels[LabelMemberAPI] == "" || !w.DeletionTimestamp.IsZero() {
			continue // not this controller's, or going already
		}
		if err := r.client.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// memberAPIManifests are the manifests of a member's two MCS API Works.
func memberAPIManifests(cluster, clusterSet string) (crds, props []workv1alpha1.Manifest, err error) {
	objs, err := memberapi.CRDs()
	if err != nil {
		return nil, nil, err
	}
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding CRD %s: %w", o.Name, err)
		}
		crds = append(crds, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	for _, p := range memberapi.ClusterProperties(cluster, clusterSet) {
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding ClusterProperty %s: %w", p.GetName(), err)
		}
		props = append(props, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return crds, props, nil
}
