package hubbench

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/internal/dev/controlplane"
)

// FloorNamespace holds the floor objects FloorWrites writes.
const FloorNamespace = "bench-floor"

// FloorWrites installs the floor's CRD in the hub cfg reaches and writes n
// floor objects three times each (create, spec merge patch, status merge
// patch) with the given writers, the floor's cases of Run. It returns the
// writes made: 3n. Callers measure what the hub spent on them.
func FloorWrites(ctx context.Context, cfg *rest.Config, n, workers int) (int, error) {
	if err := controlplane.InstallCRDs(ctx, logr.Discard(), cfg, []*apiextensionsv1.CustomResourceDefinition{floorCRD()}); err != nil {
		return 0, fmt.Errorf("installing the floor's CRD: %w", err)
	}
	if err := namespace(ctx, cfg, FloorNamespace); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	b := &bench{dc: dc, o: Options{Objects: n, Workers: workers}.withDefaults()}
	for _, run := range []func(context.Context, int) error{
		b.create(floorGVR, FloorNamespace, floor),
		b.patch(floorGVR, FloorNamespace, "floor-%05d", "", []byte(`{"spec":{"generation":2}}`)),
		b.patch(floorGVR, FloorNamespace, "floor-%05d", "status", []byte(`{"status":{"observed":2,"phase":"Ready"}}`)),
	} {
		if _, err := b.measure(ctx, "floor", run); err != nil {
			return 0, err
		}
	}
	return 3 * b.o.Objects, nil
}
