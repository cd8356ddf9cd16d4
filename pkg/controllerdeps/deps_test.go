package controllerdeps

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestOnce: a key's set-up runs once among the Deps of one WithDefaults
// call, a failed one is tried again, and Deps made apart do not share.
func TestOnce(t *testing.T) {
	d := Deps{once: &onceSet{done: map[string]bool{}}}
	copied := d // controllers get Deps by value
	runs := map[string]int{}
	run := func(key string, err error) func() error {
		return func() error { runs[key]++; return err }
	}
	for _, tc := range []struct {
		d       Deps
		key     string
		err     error
		wantErr bool
		want    int // runs of key after the call
	}{
		{d, "works-by-binding", nil, false, 1},
		{copied, "works-by-binding", nil, false, 1},
		{d, "by-target ResourceBinding", errors.New("boom"), true, 1},
		{d, "by-target ResourceBinding", nil, false, 2},
		{d, "by-target ResourceBinding", nil, false, 2},
		{Deps{once: &onceSet{done: map[string]bool{}}}, "works-by-binding", nil, false, 2},
		{Deps{}, "unshared", nil, false, 1},
		{Deps{}, "unshared", nil, false, 2},
	} {
		err := tc.d.Once(tc.key, run(tc.key, tc.err))
		if (err != nil) != tc.wantErr {
			t.Fatalf("Once(%q): error %v, want error %v", tc.key, err, tc.wantErr)
		}
		if runs[tc.key] != tc.want {
			t.Fatalf("Once(%q): %d runs, want %d", tc.key, runs[tc.key], tc.want)
		}
	}
}

// TestControllerOptions: workers pass through; a failed object is retried
// from 5 ms, doubling, never later than RetryMaxDelay (a minute unless
// set), where controller-runtime's own cap is 1,000 s.
func TestControllerOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d       Deps
		workers int
		wantMax time.Duration
	}{
		{"default cap", Deps{}, 4, DefaultRetryMaxDelay},
		{"a cap of 10s", Deps{RetryMaxDelay: 10 * time.Second}, 0, 10 * time.Second},
		{"a negative cap takes the default", Deps{RetryMaxDelay: -time.Second}, 1, DefaultRetryMaxDelay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.d.ControllerOptions(tc.workers)
			if o.MaxConcurrentReconciles != tc.workers {
				t.Errorf("workers %d, want %d", o.MaxConcurrentReconciles, tc.workers)
			}
			if o.CacheSyncTimeout != CacheSyncTimeout {
				t.Errorf("cache sync timeout %s, want %s (controller-runtime's 2m made a restart under load exit)", o.CacheSyncTimeout, CacheSyncTimeout)
			}
			req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "x"}}
			if first := o.RateLimiter.When(req); first != retryBaseDelay {
				t.Errorf("first retry after %s, want %s", first, retryBaseDelay)
			}
			var last time.Duration
			for range 40 {
				last = o.RateLimiter.When(req)
				if last > tc.wantMax {
					t.Fatalf("a retry after %s, beyond the cap %s", last, tc.wantMax)
				}
			}
			if last != tc.wantMax {
				t.Errorf("after 40 failures the retry waits %s, want the cap %s", last, tc.wantMax)
			}
			if other := o.RateLimiter.When(reconcile.Request{NamespacedName: types.NamespacedName{Name: "y"}}); other != retryBaseDelay {
				t.Errorf("another object's first retry after %s: back-off is per object", other)
			}
		})
	}
	typed := TypedControllerOptions[string](Deps{RetryMaxDelay: time.Second}, 2)
	if typed.MaxConcurrentReconciles != 2 || typed.RateLimiter.When("k") != retryBaseDelay {
		t.Errorf("typed options: %+v", typed)
	}
}

// TestCheckRetryMaxDelay: a negative cap is refused with the flag's name
// and the fix; 0 (the default) and positive caps pass.
func TestCheckRetryMaxDelay(t *testing.T) {
	for _, tc := range []struct {
		d       time.Duration
		wantErr bool
	}{{0, false}, {30 * time.Second, false}, {-time.Second, true}} {
		err := CheckRetryMaxDelay(tc.d)
		if (err != nil) != tc.wantErr {
			t.Errorf("CheckRetryMaxDelay(%s) = %v, want error %v", tc.d, err, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "--retry-max-delay") {
			t.Errorf("the error does not name the flag: %v", err)
		}
	}
}

// TestSetCondition: a condition's transition time is the clock's when its
// status changes (or it is new), and kept otherwise.
func TestSetCondition(t *testing.T) {
	was := metav1.NewTime(time.Date(2026, 1, 1, 11, 0, 0, 0, time.UTC))
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	given := metav1.NewTime(now.Add(-time.Minute))
	cond := func(s metav1.ConditionStatus, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: s, Reason: "R", LastTransitionTime: at}
	}
	for _, tc := range []struct {
		name        string
		have        []metav1.Condition
		set         metav1.Condition
		wantChanged bool
		want        metav1.Time
	}{
		{"new", nil, cond(metav1.ConditionTrue, metav1.Time{}), true, metav1.NewTime(now)},
		{"status changed", []metav1.Condition{cond(metav1.ConditionFalse, was)}, cond(metav1.ConditionTrue, metav1.Time{}), true, metav1.NewTime(now)},
		{"status kept", []metav1.Condition{cond(metav1.ConditionTrue, was)}, cond(metav1.ConditionTrue, metav1.Time{}), false, was},
		{"a time given", []metav1.Condition{cond(metav1.ConditionFalse, was)}, cond(metav1.ConditionTrue, given), true, given},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := slices.Clone(tc.have)
			changed := SetCondition(&have, tc.set, clocktesting.NewFakePassiveClock(now))
			if changed != tc.wantChanged {
				t.Errorf("changed %v, want %v", changed, tc.wantChanged)
			}
			if got := have[0].LastTransitionTime; !got.Equal(&tc.want) {
				t.Errorf("lastTransitionTime %s, want %s", got, tc.want)
			}
		})
	}
}
