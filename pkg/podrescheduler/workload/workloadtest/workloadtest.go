// Package workloadtest has a fake reader counting its reads, for tests of
// what finding a pod's workload costs the API server.
package workloadtest

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// Reader is a client.Reader counting its Gets.
type Reader struct {
	client.Reader
	// Gets is how many Gets were passed on.
	Gets int
}

// NewReader is a Reader of a fake client holding objs.
func NewReader(objs ...client.Object) *Reader {
	return &Reader{Reader: fake.NewClientBuilder().WithObjects(objs...).Build()}
}

// Get counts the Get and passes it on.
func (r *Reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.Gets++
	return r.Reader.Get(ctx, key, obj, opts...)
}
