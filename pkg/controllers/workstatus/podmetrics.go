package workstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/podsample"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// PodMetricsFieldManager writes a Work's status.podMetrics, and nothing
// else: the agent's pod metrics reporter. The execution and work status
// controllers patch only the status fields they change, so none of the
// three overwrites another's.
const PodMetricsFieldManager = "shepherd-agent-podmetrics"

// podMetricsReporter is the agent's reporter of pod metrics: for each
// Work of its execution namespace labelled workv1alpha1.LabelPodMetrics
// (a FederatedHPA on the hub scales its workload), every period it lists
// the workload's pods, their metrics.k8s.io PodMetrics, the
// custom.metrics.k8s.io metrics the Work's annotation
// workv1alpha1.AnnotationCustomMetrics names (the FederatedHPA's Pods and
// Object metrics) and the namespace's HorizontalPodAutoscalers in the
// member, and writes the compact sample into the Work's
// status.podMetrics. Works without the label cost nothing:
// the controller's predicate drops their events.
type podMetricsReporter struct {
	client      client.Client
	clients     *clusterclient.Cache
	in          interpreter.Interpreter
	pullCluster string
	period      time.Duration
	now         func() time.Time
}

// setupPodMetrics registers the reporter; agents only.
func setupPodMetrics(d controllerdeps.Deps, o Options) error {
	mgr := d.Manager
	r := &podMetricsReporter{client: mgr.GetClient(), clients: d.Clients, in: d.Interpreter, pullCluster: d.PullCluster, period: o.PodMetricsPeriod, now: d.Clock.Now}
	// A Work is looked at while it asks for a sample, and once more when
	// it stops asking, to clear the last one.
	concerned := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		w, ok := obj.(*workv1alpha1.Work)
		if !ok {
			return false
		}
		_, asked := w.Labels[workv1alpha1.LabelPodMetrics]
		return asked || w.Status.PodMetrics != nil
	})
	return builder.ControllerManagedBy(mgr).
		Named(ControllerName+"-podmetrics").
		For(&workv1alpha1.Work{}, builder.WithPredicates(concerned)).
		WithOptions(d.ControllerOptions(1)).
		Complete(r)
}

func (r *podMetricsReporter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	work := &workv1alpha1.Work{}
	if err := r.client.Get(ctx, req.NamespacedName, work); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !work.DeletionTimestamp.IsZero() || clusterOfWork(work) != r.pullCluster {
		return reconcile.Result{}, nil
	}
	if _, asked := work.Labels[workv1alpha1.LabelPodMetrics]; !asked {
		if work.Status.PodMetrics == nil {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, r.write(ctx, work, nil)
	}
	now := r.now()
	if s := work.Status.PodMetrics; s != nil {
		// At most one sample per period, whatever else changes the Work.
		if age := now.Sub(s.SampleTime.Time); age >= 0 && age < r.period {
			return reconcile.Result{RequeueAfter: r.period - age}, nil
		}
	}
	sample, err := r.sample(ctx, work, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.write(ctx, work, sample); err != nil {
		return reconcile.Result{}, err
	}
	log.V(1).Info("reported pod metrics", "work", req.NamespacedName, "pods", len(sample.Pods), "error", sample.Error)
	return reconcile.Result{RequeueAfter: r.period}, nil
}

// sample reads the Work's workload in the member.
func (r *podMetricsReporter) sample(ctx context.Context, work *workv1alpha1.Work, now time.Time) (*workv1alpha1.PodMetricsSample, error) {
	obj, err := workloadOf(work)
	if err != nil {
		return &workv1alpha1.PodMetricsSample{SampleTime: metav1.Time{Time: now}, Error: err.Error()}, nil
	}
	sel, ok := r.in.PodSelector(obj)
	if !ok {
		return &workv1alpha1.PodMetricsSample{SampleTime: metav1.Time{Time: now},
			Error: fmt.Sprintf("%s %s has no pod selector: no pods to measure", obj.GetKind(), obj.GetName())}, nil
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: r.pullCluster}, cluster); err != nil {
		return nil, err
	}
	c, err := r.clients.ForCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	ns, selector := obj.GetNamespace(), sel.String()
	pods, err := c.Kubernetes.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s %s/%s: %w", obj.GetKind(), ns, obj.GetName(), err)
	}
	in := podsample.Input{Selector: selector, Pods: pods.Items, Now: now,
		Target: autoscalingv2.CrossVersionObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName()}}
	in.PodMetrics, in.MetricsErr = podsample.ReadPodMetrics(ctx, c.Kubernetes, ns, selector)
	custom, err := workv1alpha1.ParseCustomMetrics(work.Annotations[workv1alpha1.AnnotationCustomMetrics])
	if err != nil {
		// Only the hub's controller writes the annotation, from metrics it
		// checked: none is read, and the hub finds them not reported.
		logr.FromContextOrDiscard(ctx).Info("custom metrics not read", "work", client.ObjectKeyFromObject(work), "error", err.Error())
	}
	for _, req := range custom {
		vs, err := podsample.ReadCustomMetric(ctx, c.Kubernetes, c.Mapper, ns, selector, req)
		in.CustomMetrics = append(in.CustomMetrics, podsample.CustomInput{Request: req, Values: vs, Err: err})
	}
	if hpas, err := c.Kubernetes.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{}); err == nil {
		in.Autoscalers = hpas.Items
	} else {
		logr.FromContextOrDiscard(ctx).V(1).Info("member autoscalers not readable", "namespace", ns, "error", err.Error())
	}
	return podsample.New(in), nil
}

// write sets status.podMetrics alone (nil removes it): a merge patch of
// that field, with no lock, since no other writer touches it.
func (r *podMetricsReporter) write(ctx context.Context, work *workv1alpha1.Work, s *workv1alpha1.PodMetricsSample) error {
	patched := work.DeepCopy()
	patched.Status.PodMetrics = s
	if err := r.client.Status().Patch(ctx, patched, client.MergeFrom(work), client.FieldOwner(PodMetricsFieldManager)); err != nil {
		return client.IgnoreNotFound(err)
	}
	statusWrites.WithLabelValues("work-podmetrics").Inc()
	return nil
}

// workloadOf is the Work's manifest: a Work holds its binding's one
// resource.
func workloadOf(work *workv1alpha1.Work) (*unstructured.Unstructured, error) {
	ms := work.Spec.Workload.Manifests
	if len(ms) == 0 {
		return nil, fmt.Errorf("the Work has no manifest")
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(ms[0].Raw, &obj.Object); err != nil {
		return nil, fmt.Errorf("decoding the Work's manifest: %w", err)
	}
	return obj, nil
}
