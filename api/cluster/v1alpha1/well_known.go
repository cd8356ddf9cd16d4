package v1alpha1

// Well-known keys of annotations and labels Shepherd's controllers write
// and read, defined once, here.
const (
	// AnnotationTokenExpiry on a credentials Secret holds when its
	// ServiceAccount token expires (RFC 3339); the token is renewed before.
	AnnotationTokenExpiry = "cluster.shepherd.io/token-expiry"
)
