package simmetrics

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	// EventReason is the reason of the Warning Events about knob values
	// that were ignored.
	EventReason = "InvalidSimulatedUsage"
	// eventComponent is the Events' source.
	eventComponent = "shepherd-sim-metrics"
	// maxEventMessage keeps an Event's message within what the API
	// accepts.
	maxEventMessage = 1000
	// maxReported bounds what the reporter remembers having reported.
	maxReported = 4096
)

// reporter tells about ignored knob values once per object and value: a
// log line and a Warning Event on the pod, the object an Object metric
// describes or the override ConfigMap, where `kubectl describe` shows it. Metrics are read every few seconds;
// the same mistake is not reported again until it changes.
type reporter struct {
	kube kubernetes.Interface
	log  logr.Logger

	mu   sync.Mutex
	seen map[string]struct{}
}

func newReporter(kube kubernetes.Interface, log logr.Logger) *reporter {
	return &reporter{kube: kube, log: log, seen: map[string]struct{}{}}
}

func (r *reporter) pod(ctx context.Context, pod *corev1.Pod, problems []string) {
	ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	r.report(ctx, ref, string(pod.UID), problems)
}

func (r *reporter) configMap(ctx context.Context, cm *corev1.ConfigMap, problems []string) {
	ref := corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: cm.Namespace, Name: cm.Name,
		UID: cm.UID, ResourceVersion: cm.ResourceVersion}
	r.report(ctx, ref, string(cm.UID)+"/"+cm.ResourceVersion, problems)
}

// object reports on the object an Object metric describes, by UID.
func (r *reporter) object(ctx context.Context, ref corev1.ObjectReference, problems []string) {
	r.report(ctx, ref, string(ref.UID), problems)
}

func (r *reporter) report(ctx context.Context, ref corev1.ObjectReference, id string, problems []string) {
	msg := strings.Join(problems, "; ")
	key := id + "\x00" + msg
	r.mu.Lock()
	_, done := r.seen[key]
	if !done {
		if len(r.seen) >= maxReported {
			clear(r.seen)
		}
		r.seen[key] = struct{}{}
	}
	r.mu.Unlock()
	if done {
		return
	}
	r.log.Info("ignoring simulated usage knob values", "kind", ref.Kind, "namespace", ref.Namespace,
		"name", ref.Name, "problems", problems)
	if len(msg) > maxEventMessage {
		msg = msg[:maxEventMessage-3] + "..."
	}
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", ref.Name, now.UnixNano()),
			Namespace: ref.Namespace,
		},
		InvolvedObject: ref,
		Reason:         EventReason,
		Message:        msg,
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: eventComponent},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	if _, err := r.kube.CoreV1().Events(ref.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		r.log.Error(err, "recording an Event about ignored knob values", "kind", ref.Kind,
			"namespace", ref.Namespace, "name", ref.Name)
	}
}
