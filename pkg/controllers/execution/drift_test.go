package execution

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

func deployment(image string, replicas any, extra map[string]any) map[string]any {
	spec := map[string]any{
		"replicas": replicas,
		"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "web", "image": image, "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}},
		}}},
	}
	for k, v := range extra {
		spec[k] = v
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"}, "resourceVersion": "9", "uid": "u"},
		"spec":     spec,
	}
}

func TestDiffFields(t *testing.T) {
	hub := deployment("nginx:1", int64(3), nil)
	tests := []struct {
		name   string
		member map[string]any
		want   []string // paths
	}{
		{name: "same, with the member's defaults and metadata", member: func() map[string]any {
			m := deployment("nginx:1", float64(3), map[string]any{"progressDeadlineSeconds": int64(600)})
			m["status"] = map[string]any{"replicas": int64(3)}
			m["metadata"].(map[string]any)["generation"] = int64(4)
			return m
		}()},
		{name: "image edited", member: deployment("nginx:2", int64(3), nil), want: []string{"spec.template.spec.containers[0].image"}},
		{name: "replicas edited", member: deployment("nginx:1", int64(5), nil), want: []string{"spec.replicas"}},
		{name: "a quantity written another way is the same", member: func() map[string]any {
			m := deployment("nginx:1", int64(3), nil)
			c := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["resources"] = map[string]any{"requests": map[string]any{"cpu": "0.1"}}
			return m
		}()},
		{name: "a label of Shepherd's removed", member: func() map[string]any {
			m := deployment("nginx:1", int64(3), nil)
			m["metadata"].(map[string]any)["labels"] = map[string]any{}
			return m
		}(), want: []string{"metadata.labels.app"}},
		{name: "a container added", member: func() map[string]any {
			m := deployment("nginx:1", int64(3), nil)
			ps := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			ps["containers"] = append(ps["containers"].([]any), map[string]any{"name": "sidecar"})
			return m
		}(), want: []string{"spec.template.spec.containers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diffFields(hub, tt.member, jsonValue)
			var paths []string
			for _, f := range got {
				paths = append(paths, f.Path)
			}
			if strings.Join(paths, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("diff paths %v, want %v (%+v)", paths, tt.want, got)
			}
		})
	}
}

func TestDiffIsBoundedAndDeterministic(t *testing.T) {
	hub := map[string]any{"data": map[string]any{}}
	member := map[string]any{"data": map[string]any{}}
	for i := range 40 {
		k := string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		hub["data"].(map[string]any)[k] = strings.Repeat("h", 400)
		member["data"].(map[string]any)[k] = "m"
	}
	first := diffFields(hub, member, jsonValue)
	for range 5 {
		again := diffFields(hub, member, jsonValue)
		for i := range first {
			if first[i] != again[i] {
				t.Fatal("diff order depends on map order")
			}
		}
	}
	d := newDrift(workv1alpha1.DriftDrifted, first, 1, nil, metav1.Now())
	if len(d.Fields) != workv1alpha1.MaxDriftFields || d.MoreFields != 40-workv1alpha1.MaxDriftFields {
		t.Errorf("kept %d fields, %d more", len(d.Fields), d.MoreFields)
	}
	for _, f := range d.Fields {
		if len(f.Hub) > workv1alpha1.MaxDriftValue {
			t.Errorf("value of %d characters", len(f.Hub))
		}
	}
}

func TestJudgeDrift(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Minute))
	applied := deployment("nginx:1", int64(3), nil)
	edited := deployment("nginx:2", int64(3), nil)
	newer := deployment("nginx:3", int64(3), nil)
	recorded := &workv1alpha1.ManifestDrift{Type: workv1alpha1.DriftDrifted, FirstSeenTime: t0,
		Fields: []workv1alpha1.FieldDiff{{Path: "spec.template.spec.containers[0].image", Member: `"nginx:2"`, Hub: `"nginx:1"`}}}
	tests := []struct {
		name      string
		in        driftInput
		drifted   bool
		firstSeen metav1.Time
	}{
		{name: "member as applied", in: driftInput{hub: applied, member: applied, unchanged: true}},
		{name: "member edited", in: driftInput{hub: applied, member: edited, unchanged: true}, drifted: true, firstSeen: now},
		{name: "still edited keeps the first-seen time", in: driftInput{hub: applied, member: edited, unchanged: true, prev: recorded}, drifted: true, firstSeen: t0},
		{name: "a template edit is no drift", in: driftInput{hub: newer, member: applied}},
		{name: "a template edit over a recorded drift keeps it", in: driftInput{hub: newer, member: edited, prev: recorded}, drifted: true, firstSeen: t0},
		{name: "the member edit undone resolves it though the template moved on", in: driftInput{hub: newer, member: applied, prev: recorded}},
		{name: "a recorded difference (ReportDiff) is no drift", in: driftInput{hub: newer, member: edited,
			prev: &workv1alpha1.ManifestDrift{Type: workv1alpha1.DriftDiff, Fields: recorded.Fields}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := judgeDrift(tt.in, now)
			if (d != nil) != tt.drifted {
				t.Fatalf("drift %+v, want drifted %v", d, tt.drifted)
			}
			if d != nil && !d.FirstSeenTime.Equal(&tt.firstSeen) {
				t.Errorf("first seen %v, want %v", d.FirstSeenTime, tt.firstSeen)
			}
			if d != nil && (len(d.Fields) != 1 || d.Fields[0].Member != `"nginx:2"` || d.Fields[0].Hub != `"nginx:1"`) {
				t.Errorf("fields %+v", d.Fields)
			}
		})
	}
}

func TestValueAtReadsDiffPaths(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a.b/c[d]": "v"}},
		"spec": map[string]any{"xs": []any{map[string]any{"y": int64(1)}}}}
	for _, f := range diffFields(obj, map[string]any{}, jsonValue) {
		if valueAt(obj, f.Path) == nil {
			t.Errorf("valueAt(%q) found nothing", f.Path)
		}
	}
	if got := valueAt(obj, "spec.xs[3].y"); got != nil {
		t.Errorf("out of range: %v", got)
	}
}

func TestDecideApply(t *testing.T) {
	ssa := &policyv1alpha1.ApplyStrategy{}
	hold := &policyv1alpha1.ApplyStrategy{WhenToApply: policyv1alpha1.ApplyIfNotDrifted}
	report := &policyv1alpha1.ApplyStrategy{Type: policyv1alpha1.ApplyReportDiff}
	ifNoDiff := &policyv1alpha1.ApplyStrategy{WhenToTakeOver: policyv1alpha1.TakeOverIfNoDiff}
	fromKarmada := &policyv1alpha1.ApplyStrategy{WhenToTakeOver: policyv1alpha1.TakeOverIfNoDiff, TakeOverFrom: policyv1alpha1.TakeOverFromKarmada}
	tests := []struct {
		name string
		f    applyFacts
		want verdict
	}{
		{name: "missing object is created", f: applyFacts{full: true}, want: verdictCreate},
		{name: "a copy deleted in the member is created again at once", f: applyFacts{}, want: verdictCreate},
		{name: "owned object is applied", f: applyFacts{strategy: ssa, full: true, exists: true, owned: true}, want: verdictApply},
		{name: "owned object sent unchanged and found as applied is not written", f: applyFacts{strategy: ssa, full: true, exists: true, owned: true, unchanged: true, judged: true}, want: verdictInSync},
		{name: "owned object sent unchanged but not compared is applied", f: applyFacts{strategy: ssa, full: true, exists: true, owned: true, unchanged: true}, want: verdictApply},
		{name: "owned object changed on the hub is applied", f: applyFacts{strategy: ssa, full: true, exists: true, owned: true, judged: true}, want: verdictApply},
		{name: "drift is overwritten by a full apply (Always)", f: applyFacts{full: true, exists: true, owned: true, drifted: true, unchanged: true}, want: verdictApply},
		{name: "drift is only reported between applies (Always)", f: applyFacts{exists: true, owned: true, drifted: true, unchanged: true}, want: verdictWait},
		{name: "drift is held (IfNotDrifted)", f: applyFacts{strategy: hold, full: true, exists: true, owned: true, drifted: true}, want: verdictHold},
		{name: "drift is held between applies too", f: applyFacts{strategy: hold, exists: true, owned: true, drifted: true, unchanged: true}, want: verdictHold},
		{name: "an update held back goes out once the drift is resolved", f: applyFacts{strategy: hold, exists: true, owned: true}, want: verdictApply},
		{name: "ReportDiff writes nothing to a missing object", f: applyFacts{strategy: report, full: true}, want: verdictReport},
		{name: "ReportDiff writes nothing to an owned object", f: applyFacts{strategy: report, full: true, exists: true, owned: true, differs: true}, want: verdictReport},
		{name: "an unowned object is a conflict (Abort)", f: applyFacts{full: true, exists: true}, want: verdictConflict},
		{name: "Overwrite adopts", f: applyFacts{conflict: policyv1alpha1.ConflictOverwrite, full: true, exists: true, owner: "shepherd-es-a/w"}, want: verdictAdopt},
		{name: "IfNoDiff takes over a matching object", f: applyFacts{strategy: ifNoDiff, full: true, exists: true}, want: verdictAdopt},
		{name: "IfNoDiff leaves a differing object", f: applyFacts{strategy: ifNoDiff, full: true, exists: true, differs: true}, want: verdictConflict},
		{name: "IfNoDiff never takes from another Work", f: applyFacts{strategy: ifNoDiff, full: true, exists: true, owner: "shepherd-es-a/other"}, want: verdictConflict},
		{name: "takeOverFrom: Karmada takes over a matching object Karmada wrote", f: applyFacts{strategy: fromKarmada, full: true, exists: true, fromKarmada: true}, want: verdictAdopt},
		{name: "takeOverFrom: Karmada leaves a matching object Karmada did not write", f: applyFacts{strategy: fromKarmada, full: true, exists: true}, want: verdictConflict},
		{name: "takeOverFrom: Karmada leaves a differing object Karmada wrote", f: applyFacts{strategy: fromKarmada, full: true, exists: true, fromKarmada: true, differs: true}, want: verdictConflict},
		{name: "takeOverFrom: Karmada never takes from a Work", f: applyFacts{strategy: fromKarmada, full: true, exists: true, fromKarmada: true, owner: "shepherd-es-a/other"}, want: verdictConflict},
		{name: "takeOverFrom: a source this version does not know takes over nothing", f: applyFacts{strategy: &policyv1alpha1.ApplyStrategy{WhenToTakeOver: policyv1alpha1.TakeOverIfNoDiff, TakeOverFrom: "Elsewhere"}, full: true, exists: true, fromKarmada: true}, want: verdictConflict},
		{name: "an unowned object is left alone between applies", f: applyFacts{conflict: policyv1alpha1.ConflictOverwrite, exists: true}, want: verdictWait},
		{name: "an owned object whose update was applied waits between applies", f: applyFacts{exists: true, owned: true, unchanged: true}, want: verdictWait},
		{name: "IfNoDiff takes over a matching object under Overwrite too", f: applyFacts{strategy: ifNoDiff, conflict: policyv1alpha1.ConflictOverwrite, full: true, exists: true}, want: verdictAdopt},
		{name: "Overwrite adopts an object no Work wrote", f: applyFacts{conflict: policyv1alpha1.ConflictOverwrite, full: true, exists: true, differs: true}, want: verdictAdopt},
		{name: "out of scope: nothing, whatever else holds", f: applyFacts{outOfScope: true, full: true, exists: true, owned: true, owner: "shepherd-es-a/w"}, want: verdictOutOfScope},
		{name: "out of scope: not even created", f: applyFacts{outOfScope: true, full: true}, want: verdictOutOfScope},
		{name: "out of scope: not even reported", f: applyFacts{outOfScope: true, strategy: report, full: true}, want: verdictOutOfScope},
	}
	if !(applyFacts{strategy: ifNoDiff, exists: true, differs: true}).declinedTakeover() ||
		(applyFacts{strategy: ifNoDiff, exists: true, differs: true, owner: "shepherd-es-a/other"}).declinedTakeover() ||
		(applyFacts{exists: true, differs: true}).declinedTakeover() {
		t.Error("declinedTakeover: only an IfNoDiff takeover of an object no Work wrote is declined for its difference")
	}
	if (applyFacts{strategy: fromKarmada, exists: true, differs: true}).declinedTakeover() ||
		!(applyFacts{strategy: fromKarmada, exists: true, differs: true, fromKarmada: true}).declinedTakeover() {
		t.Error("declinedTakeover: under takeOverFrom only the source's objects are declined for their difference")
	}
	if !(applyFacts{strategy: fromKarmada, exists: true}).notFromSource() ||
		(applyFacts{strategy: fromKarmada, exists: true, fromKarmada: true}).notFromSource() ||
		(applyFacts{strategy: ifNoDiff, exists: true}).notFromSource() ||
		(applyFacts{strategy: fromKarmada, exists: true, owner: "shepherd-es-a/other"}).notFromSource() {
		t.Error("notFromSource: only an object no Work wrote, under takeOverFrom, that the source did not write")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decideApply(tt.f); got != tt.want {
				t.Fatalf("decideApply = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestDecideApplyNeverWritesWhatItDoesNotOwn runs decideApply over every
// combination of its facts: an object the Work does not own is written
// (Adopt) only under Overwrite or by an IfNoDiff takeover of a matching
// object no Work wrote, never between full applies, and never out of
// scope; every verdict is reached by some combination.
func TestDecideApplyNeverWritesWhatItDoesNotOwn(t *testing.T) {
	strategies := []*policyv1alpha1.ApplyStrategy{
		nil,
		{WhenToApply: policyv1alpha1.ApplyIfNotDrifted},
		{Type: policyv1alpha1.ApplyReportDiff},
		{WhenToTakeOver: policyv1alpha1.TakeOverIfNoDiff},
		{WhenToApply: policyv1alpha1.ApplyIfNotDrifted, WhenToTakeOver: policyv1alpha1.TakeOverIfNoDiff},
		{WhenToTakeOver: policyv1alpha1.TakeOverIfNoDiff, TakeOverFrom: policyv1alpha1.TakeOverFromKarmada},
	}
	conflicts := []policyv1alpha1.ConflictResolution{"", policyv1alpha1.ConflictAbort, policyv1alpha1.ConflictOverwrite}
	owners := []string{"", "shepherd-es-a/w", "shepherd-es-a/other"}
	writes := map[verdict]bool{verdictCreate: true, verdictApply: true, verdictAdopt: true}
	reached := map[verdict]bool{}
	for _, strategy := range strategies {
		for _, conflict := range conflicts {
			for _, owner := range owners {
				for bits := range 1 << 9 {
					bit := func(i int) bool { return bits&(1<<i) != 0 }
					f := applyFacts{strategy: strategy, conflict: conflict, owner: owner,
						outOfScope: bit(0), full: bit(1), exists: bit(2), owned: bit(3), drifted: bit(4), differs: bit(5), unchanged: bit(6), fromKarmada: bit(7), judged: bit(8)}
					if f.owned && owner != "shepherd-es-a/w" {
						continue // owned means the annotation names this Work
					}
					v := decideApply(f)
					reached[v] = true
					switch {
					case f.outOfScope && v != verdictOutOfScope:
						t.Errorf("%+v: out of scope, decided %s", f, v)
					case strategy.ReportsDiff() && writes[v]:
						t.Errorf("%+v: ReportDiff, decided %s", f, v)
					case v == verdictInSync && !(f.owned && f.full && f.unchanged && f.judged && !f.drifted):
						t.Errorf("%+v: skipped the apply of an object not known to be as applied", f)
					case !f.exists || f.owned:
					case v == verdictCreate || v == verdictApply:
						t.Errorf("%+v: an object the Work does not own, decided %s", f, v)
					case v == verdictAdopt && !f.full:
						t.Errorf("%+v: adopted between full applies", f)
					case v == verdictAdopt && conflict != policyv1alpha1.ConflictOverwrite && !(owner == "" && strategy.TakesOverIfNoDiff() && !f.differs):
						t.Errorf("%+v: adopted without Overwrite or a matching IfNoDiff takeover", f)
					case v == verdictAdopt && strategy.TakesOverOnlyFrom() == policyv1alpha1.TakeOverFromKarmada && !f.fromKarmada &&
						conflict != policyv1alpha1.ConflictOverwrite:
						t.Errorf("%+v: takeOverFrom: Karmada adopted an object Karmada did not write", f)
					}
				}
			}
		}
	}
	for _, v := range []verdict{verdictCreate, verdictApply, verdictInSync, verdictAdopt, verdictHold, verdictReport, verdictConflict, verdictWait, verdictOutOfScope} {
		if !reached[v] {
			t.Errorf("no combination of facts decides %s", v)
		}
	}
}

func TestAppliedHashIgnoresMapOrder(t *testing.T) {
	a := map[string]any{"x": int64(1), "y": map[string]any{"b": "2", "a": "1"}}
	b := map[string]any{"y": map[string]any{"a": "1", "b": "2"}, "x": int64(1)}
	if appliedHash(a) != appliedHash(b) || appliedHash(a) == appliedHash(map[string]any{"x": int64(2)}) {
		t.Fatal("hash depends on map order, or ignores values")
	}
}

// TestSecretDiffsShowNoValues: a Secret's drift or difference, and that
// of any kind a customization marks sensitive, names the fields and shows
// salted hashes, never the member's or the hub's value (a binding's status
// is read by people who may not read the member object), and a recorded
// drift is still followed by those hashes. Other kinds show their values.
func TestSecretDiffsShowNoValues(t *testing.T) {
	secret := schema.GroupKind{Kind: "Secret"}
	credential := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Credential"}
	customized := interpreter.New()
	customized.SetCustom(credential, &interpreter.Custom{Sensitive: true})
	data := func(password string) map[string]any {
		return map[string]any{"data": map[string]any{"password": password, "user": "YWRtaW4="}}
	}
	for _, tc := range []struct {
		name   string
		kinds  interpreter.Interpreter
		gk     schema.GroupKind
		hashed bool
	}{
		{"a Secret", interpreter.Builtin(), secret, true},
		{"a ConfigMap", interpreter.Builtin(), schema.GroupKind{Kind: "ConfigMap"}, false},
		{"a kind a customization marks sensitive", customized, credential.GroupKind(), true},
		{"the same kind, not customized", interpreter.Builtin(), credential.GroupKind(), false},
		{"a Secret, with another kind customized", customized, secret, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fields := diffFields(data("eA=="), data("UzNjcjN0"), textFor(tc.kinds, tc.gk, "member-uid-1"))
			if len(fields) != 1 || fields[0].Path != "data.password" {
				t.Fatalf("fields %+v, want data.password alone", fields)
			}
			f := fields[0]
			if !tc.hashed {
				if f.Member != `"UzNjcjN0"` || f.Hub != `"eA=="` {
					t.Fatalf("member %q, hub %q: want the values' JSON", f.Member, f.Hub)
				}
				return
			}
			for _, v := range []string{f.Member, f.Hub} {
				if !strings.HasPrefix(v, "sha256:") || strings.Contains(v, "UzNj") || strings.Contains(v, "eA==") {
					t.Fatalf("a sensitive kind's diff shows %q", v)
				}
			}
			if f.Member == f.Hub {
				t.Fatal("different values hash alike")
			}
			if other := textFor(tc.kinds, tc.gk, "member-uid-2")("UzNjcjN0"); other == f.Member {
				t.Fatal("the hash is not salted with the member object")
			}
		})
	}

	hub := map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"password": "eA==", "user": "YWRtaW4="}}
	member := map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"password": "UzNjcjN0", "user": "YWRtaW4="}}
	text := textFor(interpreter.Builtin(), secret, "member-uid-1")
	now := metav1.Now()
	recorded := judgeDrift(driftInput{hub: hub, member: member, unchanged: true, text: text}, now)
	if recorded == nil {
		t.Fatal("no drift recorded")
	}
	newer := map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"password": "eQ==", "user": "YWRtaW4="}}
	if d := judgeDrift(driftInput{hub: newer, member: member, prev: recorded, text: text}, now); d == nil {
		t.Fatal("the member's edit, still there, no longer counts as drift after a template edit")
	}
	if d := judgeDrift(driftInput{hub: newer, member: hub, prev: recorded, text: text}, now); d != nil {
		t.Fatalf("the member's edit undone is still drift: %+v", d)
	}
}

// TestMemberOnlyFields: a takeover (whenToTakeOver: IfNoDiff) sees the
// content the member holds beyond what would be sent: an empty template
// never matches a ConfigMap with data, nor a template with fewer keys;
// spec's server defaults do not count.
func TestMemberOnlyFields(t *testing.T) {
	cm := func(data map[string]any) map[string]any {
		o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "labels": map[string]any{"team": "ops"}}}
		if data != nil {
			o["data"] = data
		}
		return o
	}
	deploy := func(spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": spec, "status": map[string]any{"replicas": 1}}
	}
	cases := []struct {
		name        string
		hub, member map[string]any
		want        []string
	}{
		{name: "the same data", hub: cm(map[string]any{"a": "1"}), member: cm(map[string]any{"a": "1"})},
		{name: "an empty template and an admin's data", hub: cm(nil), member: cm(map[string]any{"a": "1", "b": "2"}), want: []string{"data"}},
		{name: "a key the template lacks", hub: cm(map[string]any{"a": "1"}), member: cm(map[string]any{"a": "1", "b": "2"}), want: []string{"data.b"}},
		{name: "the member's labels are not content", hub: cm(map[string]any{"a": "1"}), member: cm(map[string]any{"a": "1"})},
		{name: "empty data on both sides", hub: cm(map[string]any{}), member: cm(nil)},
		{name: "spec defaults do not count", hub: deploy(map[string]any{"replicas": 1}), member: deploy(map[string]any{"replicas": 1, "strategy": map[string]any{"type": "RollingUpdate"}})},
		{name: "no spec sent, a spec held", hub: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}, member: deploy(map[string]any{"replicas": 3}), want: []string{"spec"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range memberOnlyFields(tt.hub, tt.member, jsonValue) {
				got = append(got, f.Path)
				if f.Hub != "" {
					t.Errorf("%s: hub value %q, want none", f.Path, f.Hub)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("fields %v, want %v", got, tt.want)
			}
		})
	}
}
