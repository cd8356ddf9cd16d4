package execution

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// This file is pure: how a member object differs from what Shepherd
// applied or would send, and how a recorded drift evolves. The reconciler
// (applyManifest) reads the member and writes the result.

// appliedHash identifies the member object Shepherd sends for a manifest
// (before interpreter.Retain, which depends on the member): equal hashes
// mean the same fields with the same values. Map keys marshal sorted, so
// the hash does not depend on map order.
func appliedHash(obj map[string]any) string {
	data, err := json.Marshal(obj)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// compared are the top-level fields a diff walks: what Shepherd sends,
// not the metadata the API server writes nor the status member
// controllers write.
func comparedFields(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			m, _ := v.(map[string]any)
			md := map[string]any{}
			for _, f := range []string{"labels", "annotations"} {
				if x, ok := m[f]; ok {
					md[f] = x
				}
			}
			out[k] = md
		default:
			out[k] = v
		}
	}
	return out
}

// diffFields lists the fields of hub (what Shepherd applied or would
// send) whose value in member differs, sorted by path. Only hub's fields
// count: fields the member's API server defaulted or other managers added
// are not Shepherd's. Lists of the same length compare element by element,
// lists of different lengths as a whole; numbers compare by value and
// strings that are both quantities (100m, 0.1) by quantity.
func diffFields(hub, member map[string]any, text valueText) []workv1alpha1.FieldDiff {
	var out []workv1alpha1.FieldDiff
	walkDiff("", comparedFields(hub), member, text, &out)
	slices.SortFunc(out, func(a, b workv1alpha1.FieldDiff) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// memberOnlyFields lists the content the member object holds that hub (what
// would be sent) lacks, for deciding a takeover (whenToTakeOver: IfNoDiff):
// diffFields compares only the fields Shepherd sends, so an empty template
// would "match" any object. A top-level field of the member (other than
// metadata and status) that hub does not send at all is a difference, and
// so is a key of a top-level map (a ConfigMap's or Secret's data, an RBAC
// object's fields) that hub lacks. spec is the exception below its top:
// the member's API server fills in defaults there (a Deployment's
// strategy, a pod's dnsPolicy) that a template rarely states, so spec's
// own fields compare as diffFields does. Empty values count as absent.
func memberOnlyFields(hub, member map[string]any, text valueText) []workv1alpha1.FieldDiff {
	h, m := comparedFields(hub), comparedFields(member)
	var out []workv1alpha1.FieldDiff
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "metadata" || empty(m[k]) {
			continue
		}
		hv, sent := h[k]
		if !sent || empty(hv) {
			out = append(out, fieldDiff(k, m[k], nil, text))
			continue
		}
		mm, isMap := m[k].(map[string]any)
		hm, _ := hv.(map[string]any)
		if !isMap || k == "spec" {
			continue
		}
		for _, kk := range slices.Sorted(maps.Keys(mm)) {
			if _, ok := hm[kk]; !ok && !empty(mm[kk]) {
				out = append(out, fieldDiff(joinPath(k, kk), mm[kk], nil, text))
			}
		}
	}
	return out
}

// empty reports whether v is absent or an empty map, list or string.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	}
	return false
}

func walkDiff(path string, hub any, member any, text valueText, out *[]workv1alpha1.FieldDiff) {
	switch h := hub.(type) {
	case nil:
		return // nothing sent
	case map[string]any:
		m, ok := member.(map[string]any)
		if !ok {
			if len(h) == 0 && member == nil {
				return // an empty object the API server dropped
			}
			*out = append(*out, fieldDiff(path, member, hub, text))
			return
		}
		keys := make([]string, 0, len(h))
		for k := range h {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkDiff(joinPath(path, k), h[k], m[k], text, out)
		}
	case []any:
		m, ok := member.([]any)
		if !ok || len(m) != len(h) {
			if len(h) == 0 && member == nil {
				return
			}
			*out = append(*out, fieldDiff(path, member, hub, text))
			return
		}
		for i := range h {
			walkDiff(path+"["+strconv.Itoa(i)+"]", h[i], m[i], text, out)
		}
	default:
		if !scalarEqual(hub, member) {
			*out = append(*out, fieldDiff(path, member, hub, text))
		}
	}
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// scalarEqual compares JSON scalars by meaning: 3 and 3.0, "100m" and
// "0.1" (quantities) are equal.
func scalarEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	if sa, ok := a.(string); ok {
		sb, ok := b.(string)
		if !ok {
			return false
		}
		if sa == sb {
			return true
		}
		qa, errA := resource.ParseQuantity(sa)
		qb, errB := resource.ParseQuantity(sb)
		return errA == nil && errB == nil && qa.Cmp(qb) == 0
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func fieldDiff(path string, member, hub any, text valueText) workv1alpha1.FieldDiff {
	return workv1alpha1.FieldDiff{Path: path, Member: text(member), Hub: text(hub)}
}

// valueText renders a value for a field diff: jsonValue, or hashedValue
// for a kind whose values are secret.
type valueText func(any) string

// textFor is how the diffs of a member object of kind gk show values:
// as JSON, except for the kinds the interpreter calls sensitive (Secrets,
// and any kind a customization marks), whose values a diff never shows (a
// binding's status is read by people who may not read the member object):
// a hash of the value salted with the member object's UID, which tells
// whether a value changed and which side holds which, and is no use to
// guess a short value from on the hub (the hub does not store the
// member's UID).
func textFor(kinds interpreter.Interpreter, gk schema.GroupKind, memberUID string) valueText {
	if !kinds.Sensitive(gk) {
		return jsonValue
	}
	return func(v any) string { return hashedValue(v, memberUID) }
}

// hashedValue is "sha256:" and the first 16 hex digits of the salted
// hash of v's JSON; empty for an absent value, as jsonValue.
func hashedValue(v any, salt string) string {
	if v == nil {
		return ""
	}
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(fmt.Sprint(v))
	}
	sum := sha256.Sum256(append([]byte(salt+"\x00"), data...))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// jsonValue renders a value for a field diff, cut to MaxDriftValue.
func jsonValue(v any) string {
	if v == nil {
		return ""
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(data), workv1alpha1.MaxDriftValue)
}

// bounded keeps the first MaxDriftFields diffs and counts the rest.
func bounded(fields []workv1alpha1.FieldDiff) ([]workv1alpha1.FieldDiff, int32) {
	if len(fields) <= workv1alpha1.MaxDriftFields {
		return fields, 0
	}
	return fields[:workv1alpha1.MaxDriftFields], int32(len(fields) - workv1alpha1.MaxDriftFields)
}

// newDrift records fields of type typ, keeping prev's first-seen time when
// prev is of the same type.
func newDrift(typ workv1alpha1.DriftType, fields []workv1alpha1.FieldDiff, generation int64, prev *workv1alpha1.ManifestDrift, now metav1.Time) *workv1alpha1.ManifestDrift {
	d := &workv1alpha1.ManifestDrift{Type: typ, FirstSeenTime: now, MemberGeneration: generation}
	d.Fields, d.MoreFields = bounded(fields)
	if prev != nil && prev.Type == typ {
		d.FirstSeenTime = prev.FirstSeenTime
	}
	return d
}

// driftInput is what judging one owned member object's drift needs.
type driftInput struct {
	// hub is what Shepherd sends now (after interpreter.Retain), member
	// the member object as read.
	hub, member map[string]any
	// unchanged: what Shepherd sends now is what it last applied
	// (appliedHash equal), so any difference is someone else's edit.
	unchanged bool
	// prev is the drift recorded before, if any.
	prev *workv1alpha1.ManifestDrift
	// generation of the member object.
	generation int64
	// text renders values (textFor); nil is jsonValue.
	text valueText
}

// judgeDrift returns the drift of an object Shepherd owns, nil when there
// is none:
//   - while what Shepherd sends is what it last applied, every field of it
//     whose member value differs is drift;
//   - once the hub sends something new (a template edit), a difference is
//     the pending update, not drift, unless a drift was recorded before:
//     that one stands while any of its fields still differs from the value
//     Shepherd had applied (recorded in the drift), and is resolved when
//     the member's edit is undone.
func judgeDrift(in driftInput, now metav1.Time) *workv1alpha1.ManifestDrift {
	text := in.text
	if text == nil {
		text = jsonValue
	}
	if in.unchanged {
		fields := diffFields(in.hub, in.member, text)
		if len(fields) == 0 {
			return nil
		}
		return newDrift(workv1alpha1.DriftDrifted, fields, in.generation, in.prev, now)
	}
	if in.prev == nil || in.prev.Type != workv1alpha1.DriftDrifted {
		return nil
	}
	var still []workv1alpha1.FieldDiff
	for _, f := range in.prev.Fields {
		cur := text(valueAt(in.member, f.Path))
		if cur != f.Hub {
			still = append(still, workv1alpha1.FieldDiff{Path: f.Path, Member: cur, Hub: f.Hub})
		}
	}
	if len(still) == 0 {
		return nil
	}
	return newDrift(workv1alpha1.DriftDrifted, still, in.generation, in.prev, now)
}

// valueAt reads the value at a path diffFields wrote; nil when absent.
func valueAt(obj map[string]any, path string) any {
	var cur any = obj
	for _, seg := range splitPath(path) {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[seg.key]
		case []any:
			if seg.index < 0 || seg.index >= len(c) {
				return nil
			}
			cur = c[seg.index]
		default:
			return nil
		}
	}
	return cur
}

type pathSeg struct {
	key   string
	index int
}

// splitPath parses a.b[0]["x.y"] into its segments.
func splitPath(path string) []pathSeg {
	var out []pathSeg
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			if strings.HasPrefix(path[i:], `["`) {
				// A quoted key may hold '.', '[' or ']': it ends at `"]`.
				end := strings.Index(path[i+2:], `"]`)
				if end < 0 {
					return out
				}
				q, err := strconv.Unquote(path[i+1 : i+2+end+1])
				if err != nil {
					return out
				}
				out = append(out, pathSeg{key: q, index: -1})
				i += 2 + end + 2
				continue
			}
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return out
			}
			n, err := strconv.Atoi(path[i+1 : i+end])
			if err != nil {
				return out
			}
			out = append(out, pathSeg{index: n})
			i += end + 1
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				end = len(path) - i
			}
			out = append(out, pathSeg{key: path[i : i+end], index: -1})
			i += end
		}
	}
	return out
}

// describeDrift renders a drift for conditions and events:
// "spec.replicas: member 5, hub 3; ... (and 2 more)".
func describeDrift(d *workv1alpha1.ManifestDrift) string {
	if d.Missing {
		return "missing in the member"
	}
	parts := make([]string, 0, len(d.Fields)+1)
	for _, f := range d.Fields {
		m, h := f.Member, f.Hub
		if m == "" {
			m = "(unset)"
		}
		if h == "" {
			h = "(unset)"
		}
		parts = append(parts, fmt.Sprintf("%s: member %s, hub %s", f.Path, m, h))
	}
	if d.MoreFields > 0 {
		parts = append(parts, fmt.Sprintf("and %d more fields", d.MoreFields))
	}
	return strings.Join(parts, "; ")
}
