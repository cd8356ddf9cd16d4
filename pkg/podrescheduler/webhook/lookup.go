package webhook

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/workload"
)

// optedInWorkload returns the workload of pod with its retry state as the
// API server has it now, or nil when pod has no workload or the workload
// did not opt in.
//
// Almost no workload opts in, so the answer "not opted in" comes from the
// cache of workload metadata and costs the API server nothing; only an
// opted-in workload is read again from the API server, because the retry
// state the controller recorded a moment before the replacement pod was
// created must be on that pod. The races, and why each is safe:
//
//   - A ReplicaSet (or workload) created a moment before its first pod,
//     or deleted and created again under the same name, is not in the
//     cache yet or is there with another UID: workload.Of then reads it
//     from the API server. A miss never means "no workload".
//   - A workload that opted in a moment ago, whose cache entry lags: the
//     pod is admitted unchanged. That costs nothing: a workload has retry
//     state to copy only after the controller recorded a failure, and the
//     controller records one only once its own cache, shared with this
//     one in its process, shows the opt-in. A webhook replica whose cache
//     lags further admits at worst a replacement without exclusions; if
//     it fails on a node tried before, the controller, which reads the
//     workload again, handles that failure like any other.
//   - A workload that opted out a moment ago but is still opted in in the
//     cache: the fresh read says so, and the pod is admitted unchanged.
//   - The cache not synced yet (the rescheduler just started): every read
//     goes to the API server, as it would without a cache.
func (m *mutator) optedInWorkload(ctx context.Context, pod *corev1.Pod) (*metav1.PartialObjectMetadata, error) {
	readers := []client.Reader{m.direct}
	if m.cache != nil {
		readers = []client.Reader{m.cache, m.direct}
	}
	wl, err := workload.Of(ctx, pod, readers...)
	if wl == nil || err != nil || !annotations.OptedIn(wl.Annotations) {
		return nil, err
	}
	return workload.Reread(ctx, m.direct, wl)
}
