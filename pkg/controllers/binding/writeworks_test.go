package binding

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestWriteWorks: a binding's Works are written side by side (each write
// waits on the API server; one after the other, a placement over many
// clusters takes as many round trips), at most workWriters at once, and
// the outcome reads as if they had been written in order: the clusters
// written in the order given, the first error in that order, every
// stored Work recorded, and a failed write stopping none of the others.
func TestWriteWorks(t *testing.T) {
	stored := func(cluster string) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "shepherd-es-" + cluster, Generation: 2}}
	}
	errM2, errM4 := errors.New("m2 refused"), errors.New("m4 refused")
	type outcome struct {
		wrote bool
		err   error
	}
	for _, tc := range []struct {
		name        string
		outcomes    map[string]outcome // by cluster, in the order written
		order       []string
		wantApplied []string
		wantErr     error
		// wantStored: clusters whose Work is recorded.
		wantStored []string
	}{
		{
			name:        "one Work",
			order:       []string{"m1"},
			outcomes:    map[string]outcome{"m1": {wrote: true}},
			wantApplied: []string{"m1"}, wantStored: []string{"m1"},
		},
		{
			name:        "every Work written, in the order given",
			order:       []string{"m3", "m1", "m2"},
			outcomes:    map[string]outcome{"m1": {wrote: true}, "m2": {wrote: true}, "m3": {wrote: true}},
			wantApplied: []string{"m3", "m1", "m2"}, wantStored: []string{"m1", "m2", "m3"},
		},
		{
			name:        "up to date: nothing written, nothing recorded",
			order:       []string{"m1", "m2"},
			outcomes:    map[string]outcome{"m1": {}, "m2": {wrote: true}},
			wantApplied: []string{"m2"}, wantStored: []string{"m2"},
		},
		{
			name:        "failures stop none of the others; the first in order is returned",
			order:       []string{"m1", "m2", "m3", "m4"},
			outcomes:    map[string]outcome{"m1": {wrote: true}, "m2": {err: errM2}, "m3": {wrote: true}, "m4": {err: errM4}},
			wantApplied: []string{"m1", "m3"}, wantErr: errM2, wantStored: []string{"m1", "m3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			works := map[string]*workv1alpha1.Work{"m9": stored("m9")}
			var writes []workWrite
			for _, c := range tc.order {
				o := tc.outcomes[c]
				writes = append(writes, workWrite{cluster: c, write: func(context.Context) (bool, *workv1alpha1.Work, error) {
					if o.wrote {
						return true, stored(c), nil
					}
					return false, nil, o.err
				}})
			}
			applied, err := writeWorks(context.Background(), writes, works)
			if !reflect.DeepEqual(applied, tc.wantApplied) || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("writeWorks = %v, %v; want %v, %v", applied, err, tc.wantApplied, tc.wantErr)
			}
			want := map[string]*workv1alpha1.Work{"m9": stored("m9")}
			for _, c := range tc.wantStored {
				want[c] = stored(c)
			}
			if !reflect.DeepEqual(works, want) {
				t.Errorf("works recorded: %v, want those of %v and m9", keys(works), tc.wantStored)
			}
		})
	}
}

// TestWriteWorksSideBySide: the writes of a placement over more clusters
// than workWriters run workWriters at a time: each write here waits until
// workWriters of them are under way, which writes made one after the
// other would never reach.
func TestWriteWorksSideBySide(t *testing.T) {
	const clusters = 2*workWriters + 3
	var mu sync.Mutex
	running, most := 0, 0
	full := make(chan struct{})
	var once sync.Once
	var writes []workWrite
	for i := range clusters {
		c := fmt.Sprintf("m%02d", i)
		writes = append(writes, workWrite{cluster: c, write: func(ctx context.Context) (bool, *workv1alpha1.Work, error) {
			mu.Lock()
			running++
			most = max(most, running)
			if running == workWriters {
				once.Do(func() { close(full) })
			}
			mu.Unlock()
			defer func() { mu.Lock(); running--; mu.Unlock() }()
			select {
			case <-full:
			case <-time.After(30 * time.Second):
				return false, nil, fmt.Errorf("%s: never %d writes under way at once", c, workWriters)
			}
			return true, &workv1alpha1.Work{}, nil
		}})
	}
	applied, err := writeWorks(context.Background(), writes, map[string]*workv1alpha1.Work{})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != clusters {
		t.Errorf("%d Works written, want %d", len(applied), clusters)
	}
	if most > workWriters {
		t.Errorf("%d writes under way at once, want at most %d", most, workWriters)
	}
}

func keys(m map[string]*workv1alpha1.Work) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
