//go:build !unix

package controlplane

// dirLock is a no-op where flock is unavailable: concurrent use of one
// data dir is then not detected (embedded etcd would block on it).
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (*dirLock) release() {}
