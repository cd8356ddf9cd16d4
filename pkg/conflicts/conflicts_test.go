package conflicts

import (
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestResult(t *testing.T) {
	req := reconcile.Request{}
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "works"}, "w", errors.New("changed"))
	r := NewRequeue()
	for _, step := range []struct {
		name    string
		res     reconcile.Result
		err     error
		wantErr bool
		want    time.Duration // the requeue asked for
	}{
		{name: "a conflict: a quiet requeue after 10 ms", err: conflict, want: 10 * time.Millisecond},
		{name: "again: twice as long", err: conflict, want: 20 * time.Millisecond},
		{name: "a wrapped conflict counts too", err: errors.Join(errors.New("recording"), conflict), want: 40 * time.Millisecond},
		{name: "another error is returned as it is", err: errors.New("boom"), wantErr: true},
		{name: "success passes its result and forgets the back-off", res: reconcile.Result{RequeueAfter: time.Minute}, want: time.Minute},
		{name: "the next conflict starts again at 10 ms", err: conflict, want: 10 * time.Millisecond},
	} {
		res, err := r.Result(req, step.res, step.err)
		if (err != nil) != step.wantErr {
			t.Fatalf("%s: error %v, want error %v", step.name, err, step.wantErr)
		}
		if !step.wantErr && res.RequeueAfter != step.want {
			t.Errorf("%s: requeue after %s, want %s", step.name, res.RequeueAfter, step.want)
		}
	}
}
