package federatedhpa

import (
	"fmt"
	"strconv"
	"strings"
)

// Rescale is what a SuccessfulRescale event says: the target's replicas
// before and after, and why.
type Rescale struct {
	// From is the count before; HasFrom is false for a note that does not
	// say it (a HorizontalPodAutoscaler's).
	From    int32
	HasFrom bool
	To      int32
	Reason  string
}

// RescaleNote is the note of a SuccessfulRescale event: a
// HorizontalPodAutoscaler's ("New size: 6; reason: ...") with the count it
// replaced ("New size: 6; old size: 4; reason: ..."), so that a FederatedHPA's
// events alone tell its replica history, which outlives this controller
// and whoever reads it (the dashboard reads it with ParseRescaleNote).
func RescaleNote(from, to int32, reason string) string {
	return fmt.Sprintf("New size: %d; old size: %d; reason: %s", to, from, reason)
}

// ParseRescaleNote reads a SuccessfulRescale note, RescaleNote's or a
// HorizontalPodAutoscaler's (without the old size); false for any other
// text.
func ParseRescaleNote(note string) (Rescale, bool) {
	var r Rescale
	rest, ok := strings.CutPrefix(note, "New size: ")
	if !ok {
		return Rescale{}, false
	}
	to, rest, ok := strings.Cut(rest, "; ")
	if !ok || !count(to, &r.To) {
		return Rescale{}, false
	}
	if from, after, found := strings.Cut(rest, "; "); found && strings.HasPrefix(from, "old size: ") {
		if !count(strings.TrimPrefix(from, "old size: "), &r.From) {
			return Rescale{}, false
		}
		r.HasFrom, rest = true, after
	}
	if r.Reason, ok = strings.CutPrefix(rest, "reason: "); !ok {
		return Rescale{}, false
	}
	return r, true
}

// count reads a replica count: digits only, within int32.
func count(s string, into *int32) bool {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	*into = int32(n)
	return err == nil
}
