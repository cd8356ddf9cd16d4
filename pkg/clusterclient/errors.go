package clusterclient

import (
	"context"
	"errors"
	"io"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// IsUnreachable reports whether err means the member did not answer at all
// (refused or reset connection, DNS or TLS failure, timeout) rather than
// answering with an error. Controllers use it to stop talking to a member
// for this round instead of spending one timeout per object.
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// RESTMapping maps gvk to its resource on the member. An unknown kind makes
// the mapper forget its discovery cache and try once more, because the kind
// may have been installed (e.g. a CRD) since discovery was cached.
func (c *Clients) RESTMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}
