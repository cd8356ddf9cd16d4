package v1alpha1

import (
	"bytes"
	"encoding/json"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// SetStatus records the member object's status as the reporter observed it
// at now, on its own clock: StatusTime moves when the status changes, and
// goes with it.
func (ms *ManifestStatus) SetStatus(status *runtime.RawExtension, now metav1.Time) {
	switch {
	case status == nil:
		ms.StatusTime = nil
	case ms.StatusTime == nil || !RawEqual(ms.Status, status):
		ms.StatusTime = &now
	}
	ms.Status = status
}

// RawEqual compares two raw statuses by JSON meaning: the API server may
// re-encode what was written, and a byte-wise comparison would see a
// change on every read.
func RawEqual(a, b *runtime.RawExtension) bool {
	if a == nil || b == nil {
		return a == b
	}
	if bytes.Equal(a.Raw, b.Raw) {
		return true
	}
	var x, y any
	if json.Unmarshal(a.Raw, &x) != nil || json.Unmarshal(b.Raw, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
