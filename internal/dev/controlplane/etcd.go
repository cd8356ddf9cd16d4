package controlplane

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// etcdMemberName is also the InitialCluster key; it must stay stable across
// restarts of the same data dir.
const etcdMemberName = "shepherd-hub"

// etcdServer is a running embedded etcd.
type etcdServer struct {
	*embed.Etcd
	clientURL string
	log       logr.Logger
	// closing demotes etcd's error logs once we are shutting it down on
	// purpose: every listener reports "server closed" as an error then.
	closing *atomic.Bool
}

// startEtcd runs a single-member etcd inside this process and returns once
// it is serving client requests. etcd always listens on loopback: only the
// in-process apiserver talks to it.
//
// Peer and client ports may differ between restarts of the same data dir.
// For a single-member cluster that is harmless: the stored peer URL is only
// used to dial other members, and there are none.
func startEtcd(ctx context.Context, log logr.Logger, dir string, clientPort, peerPort int) (*etcdServer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating etcd data dir: %w", err)
	}
	var err error
	if clientPort, err = pickPort(clientPort); err != nil {
		return nil, fmt.Errorf("choosing etcd client port: %w", err)
	}
	if peerPort, err = pickPort(peerPort); err != nil {
		return nil, fmt.Errorf("choosing etcd peer port: %w", err)
	}
	clientURL := loopbackURL(clientPort)
	peerURL := loopbackURL(peerPort)

	cfg := embed.NewConfig()
	cfg.Name = etcdMemberName
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// etcd's gRPC gateway is not used by the apiserver.
	cfg.EnableGRPCGateway = false
	// Route etcd's zap output into our logr logger, keeping only warnings
	// (at V(1): etcd warns about slow applies a lot on small machines) and
	// errors. embed does not touch the global zap/grpc loggers unless
	// SetupGlobalLoggers is called, which we don't.
	cfg.Logger = "zap"
	cfg.LogLevel = "warn"
	closing := new(atomic.Bool)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.New(&logrCore{log: log, min: zapcore.WarnLevel, quiet: closing}))

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		closing.Store(true)
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed while starting: %w", err)
	case <-ctx.Done():
		closing.Store(true)
		e.Close()
		return nil, fmt.Errorf("waiting for embedded etcd to become ready: %w", context.Cause(ctx))
	}
	log.V(1).Info("etcd ready", "clientURL", clientURL.String(), "peerURL", peerURL.String())
	return &etcdServer{Etcd: e, clientURL: clientURL.String(), log: log, closing: closing}, nil
}

// pickPort returns port if non-zero, otherwise a currently free loopback
// port. There is a small window in which another process could grab it;
// etcd's embed API offers no way to hand it a pre-opened listener.
func pickPort(port int) (int, error) {
	if port != 0 {
		return port, nil
	}
	l, err := listenStable("127.0.0.1")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func loopbackURL(port int) url.URL {
	return url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
}

// logrCore is a minimal zapcore.Core that forwards entries to a logr.Logger,
// so etcd's logs end up in the caller's structured logger instead of on
// stderr.
type logrCore struct {
	log    logr.Logger
	min    zapcore.Level
	quiet  *atomic.Bool // when set, errors are logged as V(1) info
	fields []zapcore.Field
}

var _ zapcore.Core = (*logrCore)(nil)

func (c *logrCore) Enabled(l zapcore.Level) bool { return l >= c.min }

func (c *logrCore) With(fields []zapcore.Field) zapcore.Core {
	return &logrCore{log: c.log, min: c.min, quiet: c.quiet, fields: append(c.fields[:len(c.fields):len(c.fields)], fields...)}
}

func (c *logrCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *logrCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	var logErr error
	for _, f := range append(c.fields[:len(c.fields):len(c.fields)], fields...) {
		if f.Type == zapcore.ErrorType {
			if err, ok := f.Interface.(error); ok && logErr == nil {
				logErr = err
				continue
			}
		}
		f.AddTo(enc)
	}
	kv := make([]any, 0, 2*len(enc.Fields))
	for _, k := range slices.Sorted(maps.Keys(enc.Fields)) {
		kv = append(kv, k, enc.Fields[k])
	}
	if e.Level >= zapcore.ErrorLevel && !c.quiet.Load() && !transientEtcdError(e.Message, logErr) {
		c.log.Error(logErr, e.Message, kv...)
		return nil
	}
	if logErr != nil {
		kv = append(kv, "error", logErr.Error())
	}
	c.log.V(1).Info(e.Message, kv...)
	return nil
}

func (c *logrCore) Sync() error { return nil }

// transientEtcdErrors are errors etcd logs that it retries by itself and
// that say nothing is wrong, by message and error text. A healthy start
// logs no error, so these are demoted to V(1) info.
var transientEtcdErrors = []struct{ message, err string }{
	// A fresh data dir: etcd's version monitor can run before the first
	// raft term is stored, and tries again at its next tick.
	{message: "failed to update storage version", err: "missing term information"},
}

func transientEtcdError(message string, err error) bool {
	for _, t := range transientEtcdErrors {
		if message == t.message && err != nil && strings.Contains(err.Error(), t.err) {
			return true
		}
	}
	return false
}

// etcdStopTimeout bounds etcd's own graceful close; embed.Etcd.Close can
// otherwise wait on lingering gRPC streams.
const etcdStopTimeout = 5 * time.Second

// stop closes etcd, waiting at most etcdStopTimeout. The returned channel
// is closed once etcd has really released its data dir, which may be later
// if the wait timed out.
func (s *etcdServer) stop() <-chan struct{} {
	s.closing.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Close()
	}()
	select {
	case <-done:
	case <-time.After(etcdStopTimeout):
		s.log.Info("etcd did not stop in time; continuing shutdown", "timeout", etcdStopTimeout)
	}
	return done
}
