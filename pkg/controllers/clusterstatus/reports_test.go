package clusterstatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestAnyReportAfter(t *testing.T) {
	probed := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(probed.Add(d)); return &t }
	work := func(times ...*metav1.Time) workv1alpha1.Work {
		w := workv1alpha1.Work{}
		for _, st := range times {
			w.Status.ManifestStatuses = append(w.Status.ManifestStatuses, workv1alpha1.ManifestStatus{StatusTime: st})
		}
		return w
	}
	for _, tc := range []struct {
		name  string
		works []workv1alpha1.Work
		want  bool
	}{
		{name: "no Works", want: false},
		{name: "no manifest status", works: []workv1alpha1.Work{work()}, want: false},
		{name: "no status time", works: []workv1alpha1.Work{work(nil)}, want: false},
		{name: "every report before the probe", works: []workv1alpha1.Work{work(at(-time.Second)), work(at(-time.Minute), nil)}, want: false},
		// Stored in whole seconds: a report in the probe's second may
		// have come after it.
		{name: "a report in the probe time's second", works: []workv1alpha1.Work{work(at(0))}, want: true},
		{name: "one report after the probe", works: []workv1alpha1.Work{work(at(-time.Second)), work(nil, at(time.Second))}, want: true},
	} {
		if got := anyReportAfter(tc.works, probed); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestQuietProbe: a probe that found nothing changed writes lastProbeTime
// when it is older than the refresh period, or ahead of the prober's
// clock (its clock was set back since it was written).
func TestQuietProbe(t *testing.T) {
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(hubNow.Add(d))) }
	for _, tc := range []struct {
		name string
		last *metav1.Time
		want bool
	}{
		{"never probed", nil, false},
		{"probed just now", at(0), true},
		{"probed within the refresh period", at(-59 * time.Second), true},
		{"probed a refresh period ago", at(-time.Minute), false},
		{"probed ahead of this clock", at(12 * time.Second), false},
	} {
		if got := quiet(tc.last, hubNow, time.Minute); got != tc.want {
			t.Errorf("%s: quiet %v, want %v", tc.name, got, tc.want)
		}
	}
}
