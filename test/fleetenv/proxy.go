package fleetenv

import (
	"io"
	"net"
	"sync"
	"time"
)

// Link is how a Proxy treats the connections through it.
type Link int

const (
	// LinkUp forwards every byte as it comes.
	LinkUp Link = iota
	// LinkCut closes every open connection and every new one: the
	// server is gone, as when its host or network fails.
	LinkCut
	// LinkSlow delays every chunk it forwards: the server answers, late.
	LinkSlow
	// LinkFlaky closes every other new connection at once and resets the
	// open ones: requests fail and clients retry.
	LinkFlaky
)

func (l Link) String() string {
	return [...]string{"up", "cut", "slow", "flaky"}[l]
}

// slowDelay is how late a slow link forwards each chunk.
const slowDelay = 150 * time.Millisecond

// Proxy forwards TCP connections from a loopback port to target, so a test
// can cut, slow down or break the path to an API server without touching
// the server. TLS passes through unchanged: clients still verify the
// server's certificate, which names 127.0.0.1.
type Proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	link     Link
	accepted int
	conns    map[net.Conn]struct{}
}

// StartProxy listens on a free loopback port and forwards to target
// (host:port).
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// Addr is where clients dial: host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.Set(LinkCut)
}

// Set changes the link; cutting or breaking it closes the open connections.
func (p *Proxy) Set(l Link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.link = l
	if l == LinkCut || l == LinkFlaky {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted++
		refuse := p.link == LinkCut || (p.link == LinkFlaky && p.accepted%2 == 0)
		if !refuse {
			p.conns[c] = struct{}{}
		}
		p.mu.Unlock()
		if refuse {
			_ = c.Close()
			continue
		}
		go p.forward(c)
	}
}

func (p *Proxy) forward(c net.Conn) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		_ = c.Close()
	}()
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.conns[s] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, s)
		p.mu.Unlock()
		_ = s.Close()
	}()
	done := make(chan struct{}, 2)
	go func() { p.copy(s, c); done <- struct{}{} }()
	go func() { p.copy(c, s); done <- struct{}{} }()
	<-done
}

// copy forwards src to dst chunk by chunk, late while the link is slow.
func (p *Proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			slow := p.link == LinkSlow
			p.mu.Unlock()
			if slow {
				time.Sleep(slowDelay)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				_ = dst.Close()
			}
			// Half-close so the other side sees the end of the stream.
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}
