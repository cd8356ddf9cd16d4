package execution

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestHandOverRetriesAConflict: the hand-over of a created object's fields
// to server-side apply tests the object's resourceVersion, so a write in
// between (a CRD's status as it becomes Established) is a conflict. The
// object is read again and the hand-over redone; another error stops it,
// and the error is returned so that the apply that needed it waits.
func TestHandOverRetriesAConflict(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	created := func() *unstructured.Unstructured { return settings(metav1.ManagedFieldsOperationUpdate) }
	for _, tc := range []struct {
		name      string
		failures  []error // answers to the first patches, in order
		wantCalls int
		handedOn  bool
		wantErr   func(error) bool
	}{
		{"no conflict: one patch", nil, 1, true, nil},
		{"a conflict: read again and patched again", []error{conflict()}, 2, true, nil},
		{"conflicts every time: gives up after the attempts", []error{conflict(), conflict(), conflict()}, handOverAttempts, false, apierrors.IsConflict},
		{"another error: no retry", []error{apierrors.NewForbidden(gvr.GroupResource(), "settings", nil)}, 1, false, apierrors.IsForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), created())
			calls := 0
			client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				if calls <= len(tc.failures) {
					return true, nil, tc.failures[calls-1]
				}
				return false, nil, nil
			})
			got, err := handOver(context.Background(), client.Resource(gvr).Namespace("shop"), created())
			switch {
			case tc.wantErr == nil && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Errorf("error %v, want another", err)
			}
			if calls != tc.wantCalls {
				t.Errorf("%d patches, want %d", calls, tc.wantCalls)
			}
			owner := ""
			for _, m := range got.GetManagedFields() {
				owner = string(m.Operation)
			}
			if handed := owner == string(metav1.ManagedFieldsOperationApply); handed != tc.handedOn {
				t.Errorf("fields handed to server-side apply: %v, want %v (managed fields %+v)", handed, tc.handedOn, got.GetManagedFields())
			}
		})
	}
}

// TestHandOverWritesNothingWhenNothingIsToMove: an object whose fields
// Shepherd already holds by server-side apply (every object after its
// first change) is not written again.
func TestHandOverWritesNothingWhenNothingIsToMove(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	u := settings(metav1.ManagedFieldsOperationApply)
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), u)
	patches := 0
	client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		patches++
		return false, nil, nil
	})
	if _, err := handOver(context.Background(), client.Resource(gvr).Namespace("shop"), u); err != nil || patches != 0 {
		t.Errorf("error %v and %d patches, want none", err, patches)
	}
}

// settings is the ConfigMap shop/settings with data k, the field Shepherd
// manages by op.
func settings(op metav1.ManagedFieldsOperationType) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("shop")
	u.SetName("settings")
	u.SetResourceVersion("1")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: workv1alpha1.FieldManager, Operation: op,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:k":{}}}`)}}})
	_ = unstructured.SetNestedField(u.Object, "v", "data", "k")
	return u
}

func conflict() error {
	return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "settings", nil)
}
