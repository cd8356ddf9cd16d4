// Package execns creates a cluster's execution namespace on the hub, where
// its Works (and its reports, such as ExportedServices) live. Every
// controller that writes there first calls Ensure: the namespace is made on
// first use, by whichever controller comes first.
package execns

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Ensure creates the cluster's execution namespace if missing.
func Ensure(ctx context.Context, c client.Client, cluster string) error {
	name := names.ExecutionNamespace(cluster)
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd,
		workv1alpha1.LabelCluster:   cluster,
	}}}
	if err := c.Create(ctx, ns, client.FieldOwner(workv1alpha1.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
