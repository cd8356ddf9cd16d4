//go:build unix

package controlplane

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// dirLock is an exclusive advisory lock on DataDir/lock.
//
// embedded etcd blocks forever (not even honouring Start's context) when
// another instance holds its bbolt file, so a second `shepherd up` on the
// same data dir, in this or another process, must be refused up front.
// flock locks belong to the open file description, so this also catches a
// second Start within the same process.
type dirLock struct{ f *os.File }

func lockDir(path string) (*dirLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is held by another running control plane", path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &dirLock{f: f}, nil
}

// release drops the lock; closing the descriptor releases the flock.
func (l *dirLock) release() { l.f.Close() }
