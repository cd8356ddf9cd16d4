package webhook

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/workload"
)

// Names of the webhook configuration and its single webhook.
const (
	DefaultConfigurationName = "shepherd-pod-rescheduler"
	WebhookName              = "pods.podrescheduler.shepherd.io"
	// Path is where the server serves the webhook.
	Path = "/mutate-v1-pod"
)

// timeoutSeconds is short: the webhook answers most pods from its cache
// and reads at most three objects from the API server, and pod creation
// must not wait on it for long when it is slow.
const timeoutSeconds = 2

// Configuration is the MutatingWebhookConfiguration calling the webhook
// at cc for every pod created outside kube-system whose controller is of a
// kind a workload can opt in through (workload.PodOwners).
// config/podrescheduler/webhook.yaml is the same object with a Service
// client config; a test keeps them in sync.
//
// failurePolicy Ignore: the webhook being down, slow or failing admits pods
// unchanged. The match condition, evaluated by the API server, spares the
// call for every other pod: owner-less pods (the controller annotates
// those it recreates itself), DaemonSets' pods and custom controllers'.
func Configuration(name string, cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta: metav1.TypeMeta{
			APIVersion: admissionregistrationv1.SchemeGroupVersion.String(),
			Kind:       "MutatingWebhookConfiguration",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         WebhookName,
			ClientConfig: cc,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{""},
					APIVersions: []string{"v1"},
					Resources:   []string{"pods"},
					Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			MatchPolicy:   ptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"},
			}}},
			ObjectSelector:          &metav1.LabelSelector{},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To[int32](timeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "pods-of-supported-workloads",
				Expression: ownedBySupportedKind(),
			}},
		}},
	}
}

// ownedBySupportedKind is the CEL expression true for a pod whose
// controller reference names a kind of workload.PodOwners, as
// workload.Of reads it.
func ownedBySupportedKind() string {
	kinds := make([]string, 0, len(workload.PodOwners()))
	for _, gvk := range workload.PodOwners() {
		apiVersion, kind := gvk.ToAPIVersionAndKind()
		kinds = append(kinds, "'"+apiVersion+"/"+kind+"'")
	}
	return "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, " +
		"has(r.controller) && r.controller && r.apiVersion + '/' + r.kind in [" + strings.Join(kinds, ", ") + "])"
}
