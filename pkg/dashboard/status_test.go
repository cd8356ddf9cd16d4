package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/shepherd-io/shepherd/pkg/actions"
)

// A refusal is answered with the status that names whose it is: the
// form's (400), a stale view's (409), the hub's own (its code), else 502.
func TestHubStatus(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "task.shepherd.io", Resource: "rescheduletasks"}, "", errors.New("no"))
	for _, tc := range []struct {
		err  error
		want int
	}{
		{formError("cluster: name it"), http.StatusBadRequest},
		{fmt.Errorf("wrapped: %w", formError("x")), http.StatusBadRequest},
		{&actions.StateError{}, http.StatusConflict},
		{forbidden, http.StatusForbidden},
		{fmt.Errorf("creating: %w", forbidden), http.StatusForbidden},
		{errors.New("connection refused"), http.StatusBadGateway},
	} {
		if got := hubStatus(tc.err); got != tc.want {
			t.Errorf("hubStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// A what-if ended by its deadline is told apart from a hub's refusal: the
// context's error, and client-go's rate limiter refusing to wait past the
// deadline (whose error does not wrap context.DeadlineExceeded; it is how
// 5,500 selectors once ended in a 502).
func TestTimedOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	limiter := flowcontrol.NewTokenBucketRateLimiter(0.001, 1)
	if err := limiter.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	throttled := limiter.Wait(ctx) // the next token comes in 1,000 s
	if throttled == nil {
		t.Fatal("the rate limiter waited past the deadline")
	}
	ended, cancelEnded := context.WithTimeout(context.Background(), -time.Second)
	defer cancelEnded()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"rate limiter", ctx, fmt.Errorf("client rate limiter Wait returned an error: %w", throttled), true},
		{"deadline of a request", ctx, fmt.Errorf("Get: %w", context.DeadlineExceeded), true},
		{"the what-if's context ended", ended, errors.New("connection reset"), true},
		{"the hub refused", ctx, apierrors.NewForbidden(schema.GroupResource{Resource: "deployments"}, "", errors.New("no")), false},
		{"the hub is unreachable", ctx, errors.New("connection refused"), false},
	} {
		if got := timedOut(tc.ctx, tc.err); got != tc.want {
			t.Errorf("%s: timedOut(%v) = %t, want %t", tc.name, tc.err, got, tc.want)
		}
	}
}
