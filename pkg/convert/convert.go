// Package convert turns Karmada's policies (PropagationPolicy,
// ClusterPropagationPolicy, OverridePolicy, ClusterOverridePolicy),
// ResourceInterpreterCustomizations and autoscalers (FederatedHPA,
// CronFederatedHPA) into Shepherd's, and reports every field whose meaning
// changes on the way: what `shepherd convert` does.
//
// Shepherd's policy API has Karmada's shape, so most objects only change
// apiVersion. The rest is a list of rules (Rules), one per row of the
// "Coming from Karmada" tables of the docs. Objects already in Shepherd's
// groups pass through unchanged, so converting twice changes nothing.
package convert

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Groups of the kinds the converter reads.
const (
	KarmadaPolicyGroup  = "policy.karmada.io"
	KarmadaConfigGroup  = "config.karmada.io"
	ShepherdPolicyGroup = "policy.shepherd.io"
	ShepherdConfigGroup = "config.shepherd.io"
	version             = "v1alpha1"
)

// kind is how one kind converts.
type kind struct {
	// karmada and shepherd are the groups it is read from and written to.
	karmada, shepherd string
	namespaced        bool
	// typ is Shepherd's Go type, which the output must decode into.
	typ reflect.Type
	// decode decodes strictly into typ.
	decode func(map[string]any) error
	// rules applies the Karmada rules to the object.
	rules func(*object)
	// check reports, on an object already in Shepherd's group, what still
	// needs the user's work.
	check func(*object)
	// claim returns what the object takes for itself alone (key: no two
	// objects of the kind may share it, whatever their group), the field
	// that names it and how messages name it; "" for nothing.
	claim func(*object) (key, field, what string)
}

// kinds are the kinds converted, by kind name.
var kinds = map[string]kind{}

func register(name string, k kind) { kinds[name] = k }

// object is one object being converted, with what the report says of it.
type object struct {
	doc     Document
	obj     map[string]any
	kind    string
	entries []Entry
	// skip is set when the object cannot be converted.
	skip bool
}

func (o *object) namespace() string {
	ns, _ := nested(o.obj, "metadata")["namespace"].(string)
	return ns
}

func (o *object) name() string {
	n, _ := nested(o.obj, "metadata")["name"].(string)
	return n
}

// note adds an entry for field under a rule, whose action it takes.
func (o *object) note(field, ruleID, format string, args ...any) {
	r := rule(ruleID)
	o.entries = append(o.entries, Entry{
		Source: o.doc.Where(), Kind: o.kind, Namespace: o.namespace(), Name: o.name(),
		Field: field, Action: r.Action, Rule: r.ID, Message: fmt.Sprintf(format, args...),
	})
	if r.Action == Skipped {
		o.skip = true
	}
}

// Convert converts documents into Shepherd objects, sorted by kind,
// namespace and name, and reports what changed. Entries (typically read
// errors) are added to the report as they are.
func Convert(docs []Document, entries ...Entry) ([]*unstructured.Unstructured, *Report) {
	return ConvertWith(Options{}, docs, entries...)
}

// ConvertWith is Convert with options.
func ConvertWith(opts Options, docs []Document, entries ...Entry) ([]*unstructured.Unstructured, *Report) {
	report := &Report{Entries: slices.Clone(entries)}
	var kept []*object
	seen := map[string]string{}
	for _, d := range docs {
		o := convertOne(d, opts)
		report.Entries = append(report.Entries, o.entries...)
		if o.skip {
			continue
		}
		id := o.kind + "/" + o.namespace() + "/" + o.name()
		if first, dup := seen[id]; dup {
			o.entries = nil
			o.note("", "duplicate", "%s is also read from %s: the first one is kept", objectName(o.namespace(), o.name()), first)
			report.Entries = append(report.Entries, o.entries...)
			continue
		}
		seen[id] = d.Where()
		kept = append(kept, o)
	}
	slices.SortFunc(kept, func(a, b *object) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.namespace(), b.namespace()), cmp.Compare(a.name(), b.name()))
	})
	// Claims are settled in the output's order, so that which object
	// keeps a claim does not depend on the order of the input.
	claimed := map[string]*object{}
	out := make([]*unstructured.Unstructured, 0, len(kept))
	for _, o := range kept {
		if claim := kinds[o.kind].claim; claim != nil {
			if key, field, what := claim(o); key != "" {
				if first, taken := claimed[o.kind+"/"+key]; taken {
					n := len(o.entries)
					o.note(field, "fhpa-one-per-target", "%s is already scaled by %s %s (read from %s): the hub refuses a second %s on one target, Karmada let both set its replicas; merge the two",
						what, o.kind, first.name(), first.doc.Where(), o.kind)
					report.Entries = append(report.Entries, o.entries[n:]...)
					continue
				}
				claimed[o.kind+"/"+key] = o
			}
		}
		// Last, the hub's CRD: an object it would refuse is not written.
		n := len(o.entries)
		if !o.admitted() {
			report.Entries = append(report.Entries, o.entries[n:]...)
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: o.obj})
	}
	report.Converted = len(out)
	report.sort()
	return out, report
}

// convertOne converts one object: its group, metadata, unknown fields and
// the kind's rules, then proves the result decodes into Shepherd's type.
func convertOne(d Document, opts Options) *object {
	o := &object{doc: d, obj: d.Object}
	o.kind, _ = o.obj["kind"].(string)
	apiVersion, _ := o.obj["apiVersion"].(string)
	group, ver, _ := strings.Cut(apiVersion, "/")
	k, ok := kinds[o.kind]
	if !ok || ver != version || (group != k.karmada && group != k.shepherd) {
		o.note("", "unsupported-kind", "%s %s is not a kind shepherd convert reads (%s)", apiVersion, o.kind, supported())
		return o
	}
	fromKarmada := group == k.karmada
	o.obj["apiVersion"] = k.shepherd + "/" + version
	delete(o.obj, "status")
	cleanMetadata(o, fromKarmada)
	if !k.namespaced {
		if ns := o.namespace(); ns != "" {
			o.note("metadata.namespace", "unknown-field", "%s is cluster-scoped: the namespace %q is dropped", o.kind, ns)
			delete(nested(o.obj, "metadata"), "namespace")
		}
	}
	// The rules run first: they read Karmada's fields that have no
	// namesake in Shepherd (a customization's Lua scripts).
	if fromKarmada {
		k.rules(o)
	} else if k.check != nil {
		k.check(o)
	}
	if opts.TakeOverFromKarmada {
		takeOverRules(o)
	}
	for _, p := range unknownFields(k.typ, o.obj, fieldPath{}) {
		o.note(p.text, "unknown-field", "Shepherd's %s has no such field (the API server would prune it): dropped", o.kind)
		deletePath(o.obj, p)
	}
	if o.skip {
		return o
	}
	if err := k.decode(o.obj); err != nil {
		o.note("", "not-well-formed", "does not decode into Shepherd's %s: %v", o.kind, err)
	}
	return o
}

// supported lists the kinds read, for messages.
func supported() string {
	names := sortedKeys(kinds)
	return "reads " + strings.Join(names, ", ") + " of " + KarmadaPolicyGroup + ", " + KarmadaConfigGroup + ", " +
		KarmadaAutoscalingGroup + " and Shepherd's groups"
}

// serverFields are the metadata the API server writes: not the user's, and
// meaningless on another server, so they are left out without a word.
var serverFields = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "managedFields", "selfLink"}

// cleanMetadata drops the server's metadata, and from a Karmada object what
// Karmada wrote into it: labels, annotations and finalizers of its
// karmada.io domains, owner references (UIDs of the old control plane) and
// kubectl's record of the last applied Karmada object.
func cleanMetadata(o *object, fromKarmada bool) {
	md := nested(o.obj, "metadata")
	if md == nil {
		return
	}
	for _, f := range serverFields {
		delete(md, f)
	}
	if !fromKarmada {
		return
	}
	for _, field := range []string{"labels", "annotations"} {
		m, _ := md[field].(map[string]any)
		for _, key := range sortedKeys(m) {
			switch {
			case karmadaKey(key):
				o.note("metadata."+field+"."+key, "karmada-metadata", "written by Karmada for its own use: dropped")
			case key == "kubectl.kubernetes.io/last-applied-configuration":
				o.note("metadata."+field+"."+key, "karmada-metadata", "kubectl's record of the Karmada object: dropped, so that kubectl apply compares with the Shepherd object")
			default:
				continue
			}
			delete(m, key)
		}
		if m != nil && len(m) == 0 {
			delete(md, field)
		}
	}
	if fin, ok := md["finalizers"].([]any); ok {
		kept := fin[:0]
		for _, f := range fin {
			if s, _ := f.(string); karmadaKey(s) {
				o.note("metadata.finalizers", "karmada-metadata", "finalizer %q belongs to Karmada's controllers: dropped", s)
				continue
			}
			kept = append(kept, f)
		}
		if len(kept) == 0 {
			delete(md, "finalizers")
		} else {
			md["finalizers"] = kept
		}
	}
	if _, ok := md["ownerReferences"]; ok {
		o.note("metadata.ownerReferences", "karmada-metadata", "owner references name objects of the Karmada control plane by UID: dropped")
		delete(md, "ownerReferences")
	}
}

// karmadaKey reports whether a label, annotation or finalizer is in one of
// Karmada's domains (karmada.io and its subdomains).
func karmadaKey(key string) bool {
	domain, _, found := strings.Cut(key, "/")
	return found && (domain == "karmada.io" || strings.HasSuffix(domain, ".karmada.io"))
}

// nested returns the map at a path of keys, nil when absent.
func nested(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// list returns the list under key, nil when absent.
func list(m map[string]any, key string) []any {
	l, _ := m[key].([]any)
	return l
}

// str returns the string under key, "" when absent.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
