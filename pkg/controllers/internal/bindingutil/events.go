package bindingutil

// maxNoteLength is the API server's limit on an events.k8s.io/v1 Event's
// note; the recorder does not cut notes itself, and a longer one is
// refused, the event lost.
const maxNoteLength = 1024

// Note cuts s to fit an event's note.
func Note(s string) string {
	if len(s) <= maxNoteLength {
		return s
	}
	const ellipsis = "..."
	return s[:maxNoteLength-len(ellipsis)] + ellipsis
}
