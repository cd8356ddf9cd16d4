package serviceexport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/execns"
	"github.com/shepherd-io/shepherd/pkg/mcs"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// FieldManager owns the fields this controller writes in members: a
// ServiceImport's IPs and families, which the Work that carries the
// ServiceImport leaves out.
const FieldManager = "shepherd-mcs"

// exportConditionTypes are the ServiceExport conditions this controller
// writes (Valid from the member, Ready and Conflict from the hub).
var exportConditionTypes = []string{
	string(mcsv1beta1.ServiceExportConditionValid), mcv1alpha1.ConditionReady, mcv1alpha1.ConditionConflict,
}

// crdRetry is how soon a member whose MCS CRDs are not served yet is looked
// at again: they arrive with the cluster's first Works.
const crdRetry = 5 * time.Second

// Reconciler reconciles one member per request.
type Reconciler struct {
	client      client.Client
	clients     *clusterclient.Cache
	members     *members
	fence       func() error
	pullCluster string
	now         func() metav1.Time
}

// Reconcile reports the member's exports to the hub, writes the hub's
// verdicts to its ServiceExports and completes its ServiceImports.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.members.stop(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !r.serves(cluster) || !cluster.DeletionTimestamp.IsZero() {
		r.members.stop(cluster.Name)
		return reconcile.Result{}, nil
	}
	clients, err := r.clients.ForCluster(ctx, cluster)
	if err != nil {
		return reconcile.Result{}, err
	}
	w, err := r.members.forClients(clients)
	if err != nil {
		return reconcile.Result{}, err
	}
	if _, err := clients.Mapper.RESTMapping(schema.GroupKind{Group: mcsv1beta1.GroupName, Kind: mcsv1beta1.ServiceExportKindName}, mcsv1beta1.GroupVersion.Version); err != nil {
		if meta.IsNoMatchError(err) {
			clients.Mapper.Reset()
			return reconcile.Result{RequeueAfter: crdRetry}, nil
		}
		return reconcile.Result{}, err
	}
	w.startMCS()
	if !w.synced() {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	full, changes := w.pending.take(r.now().Time)
	if full {
		err = errors.Join(r.exports(ctx, cluster.Name, w, w.write), r.imports(ctx, w, w.write))
	} else {
		err = r.changed(ctx, cluster.Name, w, changes)
	}
	if err != nil {
		// What failed is looked at again, with everything else: errors
		// are rare, and a full pass needs no record of what failed.
		w.pending.markFull()
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: fullPassEvery}, nil
}

// changed looks at the exports and imports that changed since the last
// reconcile.
func (r *Reconciler) changed(ctx context.Context, cluster string, w *memberWatch, changes []change) error {
	var errs []error
	for _, c := range changes {
		if c.export {
			errs = append(errs, r.exportChanged(ctx, cluster, w, c.namespace, c.name))
			continue
		}
		si, err := w.mcs.Multicluster().V1beta1().ServiceImports().Lister().ServiceImports(c.namespace).Get(c.name)
		if apierrors.IsNotFound(err) || (err == nil && si.Labels[workv1alpha1.LabelManagedBy] != workv1alpha1.ManagedByShepherd) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, r.importOne(ctx, w, w.write, si))
	}
	return errors.Join(errs...)
}

// exportChanged reports one export again, or removes its report when the
// export ended or is not valid.
func (r *Reconciler) exportChanged(ctx context.Context, cluster string, w *memberWatch, namespace, name string) error {
	se, err := w.mcs.Multicluster().V1beta1().ServiceExports().Lister().ServiceExports(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		se = nil
	} else if err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: names.ExecutionNamespace(cluster), Name: mcv1alpha1.ExportedServiceName(namespace, name)}
	hub := &mcv1alpha1.ExportedService{}
	if err := r.client.Get(ctx, key, hub); apierrors.IsNotFound(err) {
		hub = nil
	} else if err != nil {
		return err
	}
	reported := false
	if se != nil {
		if reported, err = r.exportOne(ctx, cluster, w, w.write, se, hub); err != nil {
			return err
		}
	}
	if !reported && hub != nil && hub.DeletionTimestamp.IsZero() {
		if err := r.client.Delete(ctx, hub); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing the report of an export that ended (%s): %w", key, err)
		}
	}
	return nil
}

// serves: the hub serves Push members, an agent its own.
func (r *Reconciler) serves(c *clusterv1alpha1.Cluster) bool {
	if r.pullCluster != "" {
		return c.Name == r.pullCluster
	}
	return c.Spec.SyncMode != clusterv1alpha1.Pull
}

// exports reports each valid ServiceExport as an ExportedService, removes
// the reports of exports that are gone or invalid, and writes every
// ServiceExport's conditions.
func (r *Reconciler) exports(ctx context.Context, cluster string, w *memberWatch, mc mcsclient.Interface) error {
	ns := names.ExecutionNamespace(cluster)
	reported := &mcv1alpha1.ExportedServiceList{}
	if err := r.client.List(ctx, reported, client.InNamespace(ns)); err != nil {
		return err
	}
	byName := make(map[string]*mcv1alpha1.ExportedService, len(reported.Items))
	for i := range reported.Items {
		byName[reported.Items[i].Name] = &reported.Items[i]
	}
	ses, err := w.mcs.Multicluster().V1beta1().ServiceExports().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	keep := map[string]bool{}
	for _, se := range ses {
		name := mcv1alpha1.ExportedServiceName(se.Namespace, se.Name)
		reported, err := r.exportOne(ctx, cluster, w, mc, se, byName[name])
		keep[name] = reported
		errs = append(errs, err)
	}
	for name, es := range byName {
		if !keep[name] && es.DeletionTimestamp.IsZero() {
			if err := r.client.Delete(ctx, es); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("removing the report of an export that ended (%s/%s): %w", ns, name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// exportOne reports one ServiceExport's export to the hub (hub: its
// report there, nil when none) and writes its conditions; it returns
// whether the export is reported (it is valid).
func (r *Reconciler) exportOne(ctx context.Context, cluster string, w *memberWatch, mc mcsclient.Interface, se *mcsv1beta1.ServiceExport, hub *mcv1alpha1.ExportedService) (bool, error) {
	svc, err := w.kube.Core().V1().Services().Lister().Services(se.Namespace).Get(se.Name)
	if apierrors.IsNotFound(err) {
		svc = nil
	} else if err != nil {
		return true, err // not known to be invalid: its report stays
	}
	epSlices, err := w.kube.Discovery().V1().EndpointSlices().Lister().EndpointSlices(se.Namespace).List(
		labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: se.Name}))
	if err != nil {
		return true, err
	}
	spec, valid := exportOf(cluster, se, svc, epSlices)
	if spec != nil {
		if hub, err = r.report(ctx, names.ExecutionNamespace(cluster), mcv1alpha1.ExportedServiceName(se.Namespace, se.Name), hub, spec); err != nil {
			return true, err
		}
	}
	return spec != nil, r.writeConditions(ctx, mc, se, exportConditions(valid, hub, spec))
}

// report creates or updates the member's ExportedService; it returns the
// stored object.
func (r *Reconciler) report(ctx context.Context, ns, name string, cur *mcv1alpha1.ExportedService, spec *mcv1alpha1.ExportedServiceSpec) (*mcv1alpha1.ExportedService, error) {
	if cur == nil {
		if r.pullCluster == "" { // an agent's namespace exists: registration made it
			if err := execns.Ensure(ctx, r.client, spec.Cluster); err != nil {
				return nil, err
			}
		}
		es := &mcv1alpha1.ExportedService{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd},
				Annotations: map[string]string{mcv1alpha1.AnnotationPropertiesGeneration: "1"}},
			Spec: *spec,
		}
		if err := r.client.Create(ctx, es); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// The cache had not seen it yet; its event brings this
				// member back with it.
				return nil, nil
			}
			return nil, fmt.Errorf("reporting the export of %s/%s: %w", spec.Namespace, spec.Name, err)
		}
		return es, nil
	}
	if equality.Semantic.DeepEqual(&cur.Spec, spec) {
		return cur, nil
	}
	next := cur.DeepCopy()
	if !sameProperties(&cur.Spec, spec) {
		// This update is the next generation of the spec.
		metav1.SetMetaDataAnnotation(&next.ObjectMeta, mcv1alpha1.AnnotationPropertiesGeneration, strconv.FormatInt(cur.Generation+1, 10))
	}
	next.Spec = *spec
	if err := r.client.Update(ctx, next); err != nil {
		if apierrors.IsConflict(err) {
			// The hub wrote its verdict meanwhile; that write's event
			// brings this member back with the newer object.
			return cur, nil
		}
		return nil, fmt.Errorf("updating the export of %s/%s: %w", spec.Namespace, spec.Name, err)
	}
	return next, nil
}

// writeConditions sets a ServiceExport's conditions in the member when
// they changed.
func (r *Reconciler) writeConditions(ctx context.Context, mc mcsclient.Interface, se *mcsv1beta1.ServiceExport, want []metav1.Condition) error {
	next := se.DeepCopy()
	if !mcs.SetConditions(&next.Status.Conditions, want, exportConditionTypes, r.now()) {
		return nil
	}
	if err := r.fenced(); err != nil {
		return err
	}
	_, err := mc.MulticlusterV1beta1().ServiceExports(se.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{FieldManager: FieldManager})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // the informer brings the newer object, and another reconcile
	}
	return err
}

// imports completes the member's ServiceImports that Shepherd sent: their
// IPs from the derived Service, their exporting clusters in status.
func (r *Reconciler) imports(ctx context.Context, w *memberWatch, mc mcsclient.Interface) error {
	sis, err := w.mcs.Multicluster().V1beta1().ServiceImports().Lister().List(
		labels.SelectorFromSet(labels.Set{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}))
	if err != nil {
		return err
	}
	var errs []error
	for _, si := range sis {
		errs = append(errs, r.importOne(ctx, w, mc, si))
	}
	return errors.Join(errs...)
}

// importOne completes one ServiceImport Shepherd sent.
func (r *Reconciler) importOne(ctx context.Context, w *memberWatch, mc mcsclient.Interface, si *mcsv1beta1.ServiceImport) error {
	derived, err := w.kube.Core().V1().Services().Lister().Services(si.Namespace).Get(mcs.DerivedServiceName(si.Name))
	if apierrors.IsNotFound(err) {
		derived = nil
	} else if err != nil {
		return err
	}
	imported, err := w.kube.Discovery().V1().EndpointSlices().Lister().EndpointSlices(si.Namespace).List(labels.SelectorFromSet(labels.Set{
		mcsv1beta1.LabelServiceName: si.Name, discoveryv1.LabelManagedBy: mcs.ManagedBy,
	}))
	if err != nil {
		return err
	}
	ips, families, clusters := importFill(si, derived, imported)
	var errs []error
	if !slices.Equal(ips, si.Spec.IPs) || !slices.Equal(families, si.Spec.IPFamilies) {
		applied, err := r.applyIPs(ctx, mc, si, ips, families)
		errs = append(errs, err)
		if applied != nil {
			// The status is written on top of the version the apply
			// made, not the cache's older one, which would conflict.
			si = applied
		}
	}
	errs = append(errs, r.writeClusters(ctx, mc, si, clusters))
	return errors.Join(errs...)
}

// writeClusters sets a ServiceImport's status.clusters when it differs. A
// conflict (the import changed since si was read: the Work applied it
// again) is retried on the import as the member holds it, whose
// annotation then says which clusters it lists: left to the next event,
// the status would wait for a write that may not come until the next full
// pass.
func (r *Reconciler) writeClusters(ctx context.Context, mc mcsclient.Interface, si *mcsv1beta1.ServiceImport, clusters []mcsv1beta1.ClusterStatus) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if equality.Semantic.DeepEqual(clusters, si.Status.Clusters) || (len(clusters) == 0 && len(si.Status.Clusters) == 0) {
			return nil
		}
		next := si.DeepCopy()
		next.Status.Clusters = clusters
		if err := r.fenced(); err != nil {
			return err
		}
		_, err := mc.MulticlusterV1beta1().ServiceImports(si.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{FieldManager: FieldManager})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		live, gerr := mc.MulticlusterV1beta1().ServiceImports(si.Namespace).Get(ctx, si.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(gerr) {
			return nil
		}
		if gerr != nil {
			return gerr
		}
		si = live
		_, _, clusters = importFill(live, nil, nil)
		return err
	})
	if apierrors.IsConflict(err) {
		return nil // still changing: its next event brings it back here
	}
	return err
}

// applyIPs sets a ServiceImport's IPs and families with server-side apply
// under FieldManager: the execution controller applies the rest of the
// object under its own manager, so neither undoes the other.
func (r *Reconciler) applyIPs(ctx context.Context, mc mcsclient.Interface, si *mcsv1beta1.ServiceImport, ips []string, families []corev1.IPFamily) (*mcsv1beta1.ServiceImport, error) {
	// A field left out of the apply is released (and removed, as no other
	// manager sets it); null would be refused by the schema.
	spec := map[string]any{}
	if len(ips) > 0 {
		spec["ips"] = ips
	}
	if len(families) > 0 {
		spec["ipFamilies"] = families
	}
	patch := map[string]any{
		"apiVersion": mcsv1beta1.GroupVersion.String(), "kind": mcsv1beta1.ServiceImportKindName,
		"metadata": map[string]any{"name": si.Name, "namespace": si.Namespace},
		"spec":     spec,
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	if err := r.fenced(); err != nil {
		return nil, err
	}
	force := true
	applied, err := mc.MulticlusterV1beta1().ServiceImports(si.Namespace).Patch(ctx, si.Name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return applied, nil
}

func (r *Reconciler) fenced() error {
	if r.fence == nil {
		return nil
	}
	return r.fence()
}
