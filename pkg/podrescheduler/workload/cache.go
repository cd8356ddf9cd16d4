package workload

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errNotSynced is what the reader of Cache answers before its informers
// have their initial lists.
var errNotSynced = errors.New("workload cache not synced yet")

// Cache adds metadata-only informers of every workload kind to c (they
// start with it) and returns a reader of them for Of. Until all have
// synced the reader fails every read, so that Of falls through to its
// next reader: a cache's Get would otherwise wait for the initial lists,
// longer than an admission webhook may take.
//
// The controller's cached reads of the same kinds share these informers.
func Cache(ctx context.Context, c cache.Cache) (client.Reader, error) {
	r := &syncedReader{Reader: c}
	for _, gvk := range kinds() {
		inf, err := c.GetInformer(ctx, metadataOf(gvk), cache.BlockUntilSynced(false))
		if err != nil {
			return nil, fmt.Errorf("watching the metadata of %s: %w", gvk.Kind, err)
		}
		r.informers = append(r.informers, inf)
	}
	return r, nil
}

type syncedReader struct {
	client.Reader
	informers []cache.Informer
}

func (r *syncedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	for _, inf := range r.informers {
		if !inf.HasSynced() {
			return errNotSynced
		}
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
