// Package scheme builds the runtime.Scheme every Shepherd client and
// controller uses: Kubernetes' built-in kinds plus Shepherd's API groups.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Scheme holds the built-in kinds and Shepherd's kinds.
var Scheme = New()

// New returns a fresh scheme with the built-in kinds and Shepherd's kinds.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(clusterv1alpha1.AddToScheme(s))
	utilruntime.Must(policyv1alpha1.AddToScheme(s))
	utilruntime.Must(workv1alpha1.AddToScheme(s))
	utilruntime.Must(taskv1alpha1.AddToScheme(s))
	utilruntime.Must(configv1alpha1.AddToScheme(s))
	utilruntime.Must(mcv1alpha1.AddToScheme(s))
	utilruntime.Must(autoscalingv1alpha1.AddToScheme(s))
	return s
}
