package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestManifestStatusSetStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	two := &runtime.RawExtension{Raw: []byte(`{"replicas":2}`)}
	for _, tc := range []struct {
		name   string
		before ManifestStatus
		status *runtime.RawExtension
		want   *metav1.Time
	}{
		{"first status", ManifestStatus{}, two, &t1},
		{"same status, re-encoded", ManifestStatus{Status: &runtime.RawExtension{Raw: []byte(`{ "replicas": 2 }`)}, StatusTime: &t0}, two, &t0},
		{"changed status", ManifestStatus{Status: &runtime.RawExtension{Raw: []byte(`{"replicas":1}`)}, StatusTime: &t0}, two, &t1},
		{"same status, no time yet", ManifestStatus{Status: two}, two, &t1},
		{"status gone", ManifestStatus{Status: two, StatusTime: &t0}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := tc.before
			ms.SetStatus(tc.status, t1)
			if ms.Status != tc.status {
				t.Errorf("status %v, want %v", ms.Status, tc.status)
			}
			if (ms.StatusTime == nil) != (tc.want == nil) || (tc.want != nil && !ms.StatusTime.Equal(tc.want)) {
				t.Errorf("statusTime %v, want %v", ms.StatusTime, tc.want)
			}
		})
	}
	if RawEqual(two, nil) || !RawEqual(nil, nil) || RawEqual(two, &runtime.RawExtension{Raw: []byte(`not json`)}) {
		t.Error("RawEqual with nil or invalid JSON")
	}
}
