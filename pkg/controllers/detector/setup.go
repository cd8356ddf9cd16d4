package detector

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// Setup registers the template controller ("detector", keyed by
// TemplateKey, watching policies, bindings and, on demand, the kinds
// policies name) and one policy controller per policy kind. It reads
// through the manager's cache and writes with its client.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	mgr := d.Manager
	r := &Reconciler{
		in:       d.Interpreter,
		client:   mgr.GetClient(),
		cache:    mgr.GetCache(),
		kinds:    newKinds(mgr.GetRESTMapper(), mgr.GetCache()),
		recorder: d.Recorder(ControllerName),
		opts:     opts.withDefaults(),
	}
	log := mgr.GetLogger().WithName(ControllerName)
	copts := controllerdeps.TypedControllerOptions[TemplateKey](d, r.opts.Workers)
	copts.Reconciler = r
	copts.LogConstructor = func(k *TemplateKey) logr.Logger {
		if k == nil {
			return log
		}
		return log.WithValues("template", k.String())
	}
	c, err := controller.NewTyped(ControllerName, mgr, copts)
	if err != nil {
		return err
	}
	r.kinds.bind(c, templateHandler(), templatePredicate())
	cache := mgr.GetCache()
	// A kind's customization changing (taught by the controllers of package
	// customization) changes what its templates' bindings should say: look
	// at them all again.
	reinterpret := make(chan event.TypedGenericEvent[*unstructured.Unstructured], 256)
	stopped := make(chan struct{})
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return nil
	})); err != nil {
		return err
	}
	r.in.OnChange(func(gvk schema.GroupVersionKind) { r.templatesOf(gvk.GroupKind(), reinterpret, stopped) })
	if err := c.Watch(source.TypedChannel[*unstructured.Unstructured, TemplateKey](reinterpret, templateHandler())); err != nil {
		return err
	}
	for _, src := range []source.TypedSource[TemplateKey]{
		source.TypedKind(cache, &policyv1alpha1.PropagationPolicy{}, policyHandler[*policyv1alpha1.PropagationPolicy](r),
			predicate.TypedGenerationChangedPredicate[*policyv1alpha1.PropagationPolicy]{}),
		source.TypedKind(cache, &policyv1alpha1.ClusterPropagationPolicy{}, policyHandler[*policyv1alpha1.ClusterPropagationPolicy](r),
			predicate.TypedGenerationChangedPredicate[*policyv1alpha1.ClusterPropagationPolicy]{}),
		source.TypedKind(cache, &workv1alpha1.ResourceBinding{}, bindingHandler[*workv1alpha1.ResourceBinding](),
			bindingPredicate[*workv1alpha1.ResourceBinding]()),
		source.TypedKind(cache, &workv1alpha1.ClusterResourceBinding{}, bindingHandler[*workv1alpha1.ClusterResourceBinding](),
			bindingPredicate[*workv1alpha1.ClusterResourceBinding]()),
	} {
		if err := c.Watch(src); err != nil {
			return err
		}
	}
	if err := setupPolicyController(d, r, "detector-propagationpolicy", func() *policyv1alpha1.PropagationPolicy {
		return &policyv1alpha1.PropagationPolicy{}
	}); err != nil {
		return err
	}
	return setupPolicyController(d, r, "detector-clusterpropagationpolicy", func() *policyv1alpha1.ClusterPropagationPolicy {
		return &policyv1alpha1.ClusterPropagationPolicy{}
	})
}

func setupPolicyController[P policyv1alpha1.PolicyObject](d controllerdeps.Deps, r *Reconciler, name string, newPolicy func() P) error {
	return ctrl.NewControllerManagedBy(d.Manager).
		Named(name).
		For(newPolicy(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(d.ControllerOptions(0)).
		Complete(&policyReconciler[P]{client: r.client, kinds: r.kinds, recorder: r.recorder, newPolicy: newPolicy, opts: r.opts})
}
