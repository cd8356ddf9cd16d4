package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
