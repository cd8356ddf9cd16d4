package convert

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Action says what the converter did with one field (or object).
type Action string

// The actions of a report entry. Dropped, Changed and Added mean the
// output differs from what the user wrote; Differs means it is the same but
// Shepherd reads it differently; Manual, Skipped, Refused and Failed mean
// something was not converted, and make `shepherd convert` exit non-zero.
const (
	// Dropped: the field was removed.
	Dropped Action = "dropped"
	// Changed: the field was rewritten.
	Changed Action = "changed"
	// Added: a field was written that makes Karmada's default explicit,
	// where Shepherd's default differs.
	Added Action = "added"
	// Differs: kept as written; Shepherd gives it another meaning.
	Differs Action = "differs"
	// Manual: left for the user to write (a Lua script to write in CEL).
	Manual Action = "manual"
	// Skipped: the object was not converted (a kind Shepherd has no
	// equivalent for, or a combination Karmada refuses as well).
	Skipped Action = "skipped"
	// Refused: the object was converted, but the hub's CRD (its schema
	// or its CEL rules) refuses it: it is not written.
	Refused Action = "refused"
	// Failed: the input could not be read.
	Failed Action = "error"
)

// Incomplete reports whether the action leaves something unconverted.
func (a Action) Incomplete() bool {
	return a == Manual || a == Skipped || a == Refused || a == Failed
}

// Entry is one line of the report: one field of one object.
type Entry struct {
	// Source is where the object was read: FILE:LINE, "-:LINE" for stdin,
	// or "karmada" for a live control plane.
	Source    string `json:"source"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Field is the path in the object as written, e.g.
	// spec.placement.replicaScheduling.weightPreference.
	Field  string `json:"field,omitempty"`
	Action Action `json:"action"`
	// Rule names the rule of docs/migrating-from-karmada.md that applied.
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Report lists every place where the output's meaning differs from the
// input's, and what could not be converted.
type Report struct {
	// Converted counts the objects written.
	Converted int     `json:"converted"`
	Entries   []Entry `json:"entries"`
}

// Incomplete reports whether anything was not converted.
func (r *Report) Incomplete() bool {
	return slices.ContainsFunc(r.Entries, func(e Entry) bool { return e.Action.Incomplete() })
}

// count returns how many entries have one of the actions.
func (r *Report) count(actions ...Action) int {
	n := 0
	for _, e := range r.Entries {
		if slices.Contains(actions, e.Action) {
			n++
		}
	}
	return n
}

// objects returns how many objects have an entry with the action.
func (r *Report) objects(a Action) int {
	seen := map[Entry]bool{}
	for _, e := range r.Entries {
		if e.Action == a {
			seen[Entry{Source: e.Source, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}] = true
		}
	}
	return len(seen)
}

// sort orders entries as the output is ordered (kind, namespace, name),
// keeping each object's entries in the order its fields were visited;
// read errors, which name no object, come first.
func (r *Report) sort() {
	slices.SortStableFunc(r.Entries, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Source, b.Source))
	})
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	out := *r
	if out.Entries == nil {
		out.Entries = []Entry{}
	}
	return enc.Encode(out)
}

// WriteText writes the report for people: a summary, then the entries of
// each object under a line naming it and where it was read.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "converted %d object(s)", r.Converted)
	if n := r.count(Dropped, Changed, Added, Differs); n > 0 {
		fmt.Fprintf(&b, "; %d difference(s) in meaning", n)
	}
	if n := r.count(Manual); n > 0 {
		fmt.Fprintf(&b, "; %d rule(s) left for you to write (%s)", n, Placeholder)
	}
	if n := r.count(Skipped, Failed); n > 0 {
		fmt.Fprintf(&b, "; %d object(s) or document(s) not converted", n)
	}
	if n := r.objects(Refused); n > 0 {
		fmt.Fprintf(&b, "; %d object(s) the hub would refuse, not written", n)
	}
	b.WriteString("\n")
	last := ""
	for _, e := range r.Entries {
		head := e.Source
		if e.Kind != "" {
			head += " " + e.Kind + " " + objectName(e.Namespace, e.Name)
		}
		if head != last {
			fmt.Fprintf(&b, "\n%s\n", head)
			last = head
		}
		field := e.Field
		if field == "" {
			field = "(object)"
		}
		fmt.Fprintf(&b, "  %s: %s: %s [%s]\n", field, e.Action, e.Message, e.Rule)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
