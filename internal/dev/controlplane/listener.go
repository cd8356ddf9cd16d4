package controlplane

import (
	"net"
	"sync"
	"sync/atomic"
)

// releasableListener is the apiserver's listener, which shutdown can
// release (close the socket, freeing the port for a restart in place)
// while the apiserver still runs.
//
// kube-apiserver's secure serving panics ("Stopped listening ... due to
// error") when its listener fails before the server's own stop channel is
// closed, and under load that channel closes late in the shutdown
// sequence. So once released, Accept does not return the socket's error
// until the server itself closes the listener (http.Server.Shutdown
// does, after that channel is closed); then Serve sees a shutdown and
// returns quietly.
type releasableListener struct {
	net.Listener
	released atomic.Bool
	once     sync.Once
	closed   chan struct{}
}

func newReleasableListener(ln net.Listener) *releasableListener {
	return &releasableListener{Listener: ln, closed: make(chan struct{})}
}

// Accept is the socket's, except that after release its error waits for
// the server's Close.
func (l *releasableListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil && l.released.Load() {
		<-l.closed
	}
	return c, err
}

// Close is the server's close; after a release the socket is closed
// already, which is no error to the server.
func (l *releasableListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	if l.released.Load() {
		return nil
	}
	return l.Listener.Close()
}

// release closes the socket without closing the listener for its server.
func (l *releasableListener) release() error {
	l.released.Store(true)
	return l.Listener.Close()
}
