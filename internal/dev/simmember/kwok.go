package simmember

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/clock"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	configv1alpha1 "sigs.k8s.io/kwok/pkg/apis/config/v1alpha1"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	"sigs.k8s.io/kwok/pkg/kwok/controllers"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/expression"
	"sigs.k8s.io/kwok/pkg/utils/lifecycle"
	"sigs.k8s.io/yaml"
)

// podCIDR is the pool kwok hands pod IPs out of. One pool per member, not
// per node, so NodePods is not limited by a per-node range.
const podCIDR = "10.244.0.0/16"

// kwokStages are kwok's default stages, as `kwokctl` configures them for a
// kwok controller without node leases: nodes become Ready at once and
// heartbeat their status every 20-45 s; pods on those nodes become
// Running and Ready at once, pods owned by a Job then complete, and
// terminating pods are deleted. Leases are left out on purpose: kwok only
// manages a node while it holds the node's lease, so after a restart it
// would wait for the previous run's lease (40 s) to expire.
var kwokStages = []string{
	nodefast.DefaultNodeInit,
	nodeheartbeat.DefaultNodeHeartbeat,
	podfast.DefaultPodReady,
	podfast.DefaultPodComplete,
	podfast.DefaultPodDelete,
}

// loadKwokStages parses kwokStages and the extra stages (YAML streams of
// kwok Stage documents, Options.KwokStages) the way kwok's config loader
// does (YAML to v1alpha1, converted without defaulting), grouped by
// resource. Where several stages match an object kwok picks one at random
// in proportion to their weights, and never one of weight 0 when another
// has more: an extra stage with a weight wins over the defaults (weight 0)
// wherever it matches.
func loadKwokStages(extra [][]byte) (map[internalversion.StageResourceRef][]*internalversion.Stage, error) {
	stages := make(map[internalversion.StageResourceRef][]*internalversion.Stage)
	for _, raw := range kwokStages {
		var v v1alpha1.Stage
		if err := yaml.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("parsing kwok stage: %w", err)
		}
		s, err := internalversion.ConvertToInternalStage(&v)
		if err != nil {
			return nil, fmt.Errorf("converting kwok stage %s: %w", v.Name, err)
		}
		stages[s.Spec.ResourceRef] = append(stages[s.Spec.ResourceRef], s)
	}
	for i, stream := range extra {
		parsed, err := parseKwokStages(stream)
		if err != nil {
			return nil, fmt.Errorf("kwok stages[%d]: %w", i, err)
		}
		for _, s := range parsed {
			stages[s.Spec.ResourceRef] = append(stages[s.Spec.ResourceRef], s)
		}
	}
	return stages, nil
}

// parseKwokStages reads a YAML stream of kwok Stage documents and checks
// each the way kwok will play it: its kind, its resource and its selector
// expressions.
func parseKwokStages(stream []byte) ([]*internalversion.Stage, error) {
	var out []*internalversion.Stage
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for n := 0; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			continue
		}
		var v v1alpha1.Stage
		if err := yaml.UnmarshalStrict(raw, &v); err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if v.APIVersion != v1alpha1.GroupVersion.String() || v.Kind != v1alpha1.StageKind {
			return nil, fmt.Errorf("document %d is %s %s: want apiVersion %s, kind %s", n, v.APIVersion, v.Kind, v1alpha1.GroupVersion, v1alpha1.StageKind)
		}
		if v.Name == "" {
			return nil, fmt.Errorf("document %d: metadata.name is required", n)
		}
		if v.Spec.ResourceRef.Kind == "" {
			return nil, fmt.Errorf("stage %s: spec.resourceRef.kind is required (Pod, Node, ...)", v.Name)
		}
		s, err := internalversion.ConvertToInternalStage(&v)
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", v.Name, err)
		}
		if s.Spec.Selector == nil {
			// kwok ignores a stage without a selector.
			return nil, fmt.Errorf("stage %s: spec.selector is required", v.Name)
		}
		for j, e := range s.Spec.Selector.MatchExpressions {
			if e.JQ == nil {
				continue
			}
			if _, err := expression.NewRequirement(e.JQ.Key, e.JQ.Operator, e.JQ.Values); err != nil {
				return nil, fmt.Errorf("stage %s: spec.selector.matchExpressions[%d] (key %q): %w", v.Name, j, e.JQ.Key, err)
			}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("no kwok Stage in it")
	}
	return out, nil
}

// startKwok runs kwok's controller (sigs.k8s.io/kwok/pkg/kwok/controllers)
// against the member: it plays the stages above for the nodes carrying the
// kwok annotation, standing in for their kubelets. Parallelism and pager
// settings are the kwok binary's defaults. kwok has no Stop: its
// goroutines end with ctx, except for its event broadcaster and two
// delaying queues, which it never shuts down (four idle goroutines per
// start).
func (m *Member) startKwok(ctx context.Context, extra [][]byte) error {
	stages, err := loadKwokStages(extra)
	if err != nil {
		return err
	}
	if err := warmKwokCEL(ctx, stages); err != nil {
		return err
	}
	var defaults configv1alpha1.KwokConfiguration
	configv1alpha1.SetObjectDefaults_KwokConfiguration(&defaults)
	o := defaults.Options

	client := m.client("kwok")
	// The default stages only patch status and delete, so the dynamic
	// client, REST mapper and impersonating clients that "apply" and
	// impersonation stages need are not configured.
	ctr, err := controllers.NewController(controllers.Config{
		Clock:                             clock.RealClock{},
		TypedClient:                       client,
		RESTClient:                        client.Discovery().RESTClient(),
		ManageNodesWithAnnotationSelector: kwokNodeAnnotation + "=" + kwokNodeAnnotationValue,
		CIDR:                              podCIDR,
		LocalStages:                       stages,
		PodPlayStageParallelism:           o.PodPlayStageParallelism,
		NodePlayStageParallelism:          o.NodePlayStageParallelism,
		PodsOnNodeSyncParallelism:         o.PodsOnNodeSyncParallelism,
		EnablePodsOnNodeSyncListPager:     *o.EnablePodsOnNodeSyncListPager,
		EnablePodsOnNodeSyncStreamWatch:   *o.EnablePodsOnNodeSyncStreamWatch,
		ID:                                "shepherd-member-" + m.name,
	})
	if err != nil {
		return fmt.Errorf("creating kwok controller: %w", err)
	}
	// kwok logs one info line per stage played, i.e. per pod transition;
	// only produce them when they would be shown.
	level := kwoklog.LevelWarn
	if m.upstreamLog.V(1).Enabled() {
		level = kwoklog.LevelInfo
	}
	ctx = kwoklog.NewContext(ctx, kwoklog.NewLogger(kwokLogWriter{m.upstreamLog.WithName("kwok")}, level))
	if err := ctr.Start(ctx); err != nil {
		return fmt.Errorf("starting kwok controller: %w", err)
	}
	return nil
}

// kwokCELTypes serializes warmKwokCEL.
var kwokCELTypes sync.Mutex

// warmKwokCEL matches every stage once against an empty object of its kind,
// alone. kwok builds a stage's CEL environment the first time it plays the
// stage, and the CEL adapter under it caches Go type information in
// package-level maps without a lock: members started together in one
// process built their environments at once and crashed the process with
// "concurrent map writes". Once a kind's types are cached, later builds only
// read the caches, so building each stage's environment here first, one
// caller at a time, leaves nothing for the controllers to write.
func warmKwokCEL(ctx context.Context, stages map[internalversion.StageResourceRef][]*internalversion.Stage) error {
	kwokCELTypes.Lock()
	defer kwokCELTypes.Unlock()
	for _, ref := range slices.SortedFunc(maps.Keys(stages), func(a, b internalversion.StageResourceRef) int {
		return strings.Compare(a.APIGroup+"/"+a.Kind, b.APIGroup+"/"+b.Kind)
	}) {
		var obj any
		switch ref {
		case internalversion.StageResourceRef{APIGroup: "v1", Kind: "Node"}:
			obj = &corev1.Node{}
		case internalversion.StageResourceRef{APIGroup: "v1", Kind: "Pod"}:
			obj = &corev1.Pod{}
		default:
			continue // kwok plays the others on unstructured objects: no Go types to cache
		}
		lc, err := lifecycle.NewLifecycle(stages[ref])
		if err != nil {
			return fmt.Errorf("kwok stages for %s: %w", ref.Kind, err)
		}
		if _, err := lc.Match(ctx, &lifecycle.Event{Data: obj}); err != nil {
			return fmt.Errorf("kwok stages for %s: %w", ref.Kind, err)
		}
	}
	return nil
}

// kwokLogWriter turns kwok's logs into logr calls. kwok logs through its own
// slog wrapper, which can only be built around an io.Writer (JSON lines,
// one record per Write), not around a logr.Logger; decoding the record
// keeps its key/value pairs structured.
type kwokLogWriter struct{ log logr.Logger }

func (w kwokLogWriter) Write(p []byte) (int, error) {
	var rec map[string]any
	if err := json.Unmarshal(p, &rec); err != nil {
		w.log.Info("unparsable kwok log record", "record", string(p))
		return len(p), nil
	}
	msg, _ := rec["msg"].(string)
	level, _ := rec["level"].(string)
	var err error
	if errText, ok := rec["err"].(string); ok && level == "ERROR" {
		err = errors.New(errText)
		delete(rec, "err")
	}
	for _, k := range []string{"msg", "level", "time", "source"} {
		delete(rec, k)
	}
	kv := make([]any, 0, 2*len(rec))
	for _, k := range slices.Sorted(maps.Keys(rec)) {
		kv = append(kv, k, rec[k])
	}
	switch level {
	case "ERROR":
		w.log.Error(err, msg, kv...)
	case "WARN":
		w.log.Info(msg, kv...)
	default:
		w.log.V(1).Info(msg, kv...)
	}
	return len(p), nil
}
