package admission

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cronschedule"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Names and paths of the autoscalers' webhooks.
const (
	FederatedHPAWebhookName     = "federatedhpas.autoscaling.shepherd.io"
	FederatedHPAWebhookPath     = "/validate-autoscaling-shepherd-io-v1alpha1-federatedhpa"
	CronFederatedHPAWebhookName = "cronfederatedhpas.autoscaling.shepherd.io"
	CronFederatedHPAWebhookPath = "/validate-autoscaling-shepherd-io-v1alpha1-cronfederatedhpa"
)

// autoscalerWebhook checks every creation and update of a namespaced
// autoscaling resource.
func autoscalerWebhook(name, resource string, cc admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.ValidatingWebhook {
	return validatingWebhook(name, cc, admissionregistrationv1.Rule{
		APIGroups:   []string{autoscalingv1alpha1.SchemeGroupVersion.Group},
		APIVersions: []string{autoscalingv1alpha1.SchemeGroupVersion.Version},
		Resources:   []string{resource},
		Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
	}, &metav1.LabelSelector{})
}

// FederatedHPAValidator refuses a FederatedHPA whose target another
// FederatedHPA of its namespace already scales (naming it): two would set
// the same replicas. The target is always in the FederatedHPA's own
// namespace, since its reference has none. hub lists the others.
func FederatedHPAValidator(hub client.Reader) SpecValidator[*autoscalingv1alpha1.FederatedHPA] {
	return SpecValidator[*autoscalingv1alpha1.FederatedHPA]{
		Kind:     autoscalingv1alpha1.SchemeGroupVersion.WithKind("FederatedHPA").GroupKind(),
		New:      func() *autoscalingv1alpha1.FederatedHPA { return &autoscalingv1alpha1.FederatedHPA{} },
		Spec:     func(f *autoscalingv1alpha1.FederatedHPA) any { return f.Spec.ScaleTargetRef },
		Validate: func(f *autoscalingv1alpha1.FederatedHPA) field.ErrorList { return validateFederatedHPA(hub, f) },
	}
}

func validateFederatedHPA(hub client.Reader, f *autoscalingv1alpha1.FederatedHPA) field.ErrorList {
	path := field.NewPath("spec", "scaleTargetRef")
	ref := f.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return field.ErrorList{field.Invalid(path.Child("apiVersion"), ref.APIVersion, err.Error())}
	}
	if ref.Kind == "FederatedHPA" || ref.Kind == "CronFederatedHPA" {
		return field.ErrorList{field.Invalid(path.Child("kind"), ref.Kind, "a FederatedHPA scales a workload: name a Deployment, StatefulSet or another kind with replicas")}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	list := &autoscalingv1alpha1.FederatedHPAList{}
	if err := hub.List(ctx, list, client.InNamespace(f.Namespace)); err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("listing the FederatedHPAs of namespace %s: %w", f.Namespace, err))}
	}
	for _, other := range list.Items {
		og, _ := schema.ParseGroupVersion(other.Spec.ScaleTargetRef.APIVersion)
		if other.Name == f.Name || og.Group != gv.Group || other.Spec.ScaleTargetRef.Kind != ref.Kind || other.Spec.ScaleTargetRef.Name != ref.Name {
			continue
		}
		return field.ErrorList{field.Duplicate(path, fmt.Sprintf("%s %s/%s is already scaled by FederatedHPA %s: change that one, or delete it first", ref.Kind, f.Namespace, ref.Name, other.Name))}
	}
	return nil
}

// CronFederatedHPAValidator refuses a rule whose schedule is not a cron
// expression or whose timeZone is not a zone, naming the rule's field.
func CronFederatedHPAValidator() SpecValidator[*autoscalingv1alpha1.CronFederatedHPA] {
	return SpecValidator[*autoscalingv1alpha1.CronFederatedHPA]{
		Kind:     autoscalingv1alpha1.SchemeGroupVersion.WithKind("CronFederatedHPA").GroupKind(),
		New:      func() *autoscalingv1alpha1.CronFederatedHPA { return &autoscalingv1alpha1.CronFederatedHPA{} },
		Spec:     func(c *autoscalingv1alpha1.CronFederatedHPA) any { return c.Spec },
		Validate: validateCronFederatedHPA,
	}
}

func validateCronFederatedHPA(c *autoscalingv1alpha1.CronFederatedHPA) field.ErrorList {
	var errs field.ErrorList
	for i, r := range c.Spec.Rules {
		path := field.NewPath("spec", "rules").Index(i)
		if _, err := cronschedule.Parse(r.Schedule); err != nil {
			errs = append(errs, field.Invalid(path.Child("schedule"), r.Schedule, err.Error()))
		}
		if r.TimeZone != nil {
			if _, err := cronschedule.Zone(*r.TimeZone, time.UTC); err != nil {
				errs = append(errs, field.Invalid(path.Child("timeZone"), *r.TimeZone, err.Error()))
			}
		}
	}
	return errs
}

// newAutoscalerHandlers returns the two webhooks' HTTP handlers.
func newAutoscalerHandlers(hub client.Reader, log logr.Logger) (fhpa, cronfhpa http.Handler, err error) {
	if fhpa, err = FederatedHPAValidator(hub).Handler(scheme.Scheme, FederatedHPAWebhookPath, log.WithName("federatedhpas")); err != nil {
		return nil, nil, err
	}
	cronfhpa, err = CronFederatedHPAValidator().Handler(scheme.Scheme, CronFederatedHPAWebhookPath, log.WithName("cronfederatedhpas"))
	return fhpa, cronfhpa, err
}
