package controllermanager

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Default leader-election timing, controller-runtime's.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Fence keeps a leader that lost its lease without knowing it (a process
// frozen by SIGSTOP, a VM paused, a long GC or network stall) from writing
// once it runs again. It remembers when the leader-election lock was last
// written successfully (an acquisition or a renewal: proof that the lease
// was ours then) and refuses every write once that is longer ago than the
// renew deadline. A healthy leader renews every retry period; another
// replica can take over only after the lease duration, which is longer
// than the renew deadline, so no write passes the fence after a take-over.
//
// Writes are refused without a request: the check reads a clock and an
// atomic. The leader elector itself then finds the lease taken and stops
// the manager.
type Fence struct {
	resourcelock.Interface
	window time.Duration
	now    func() time.Time
	last   atomic.Int64 // UnixNano of the last successful lock write
}

// NewFence wraps lock; window is the renew deadline.
func NewFence(lock resourcelock.Interface, window time.Duration) *Fence {
	return &Fence{Interface: lock, window: window, now: time.Now}
}

// Create records an acquisition.
func (f *Fence) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	begin := f.now()
	err := f.Interface.Create(ctx, ler)
	if err == nil {
		f.last.Store(begin.UnixNano())
	}
	return err
}

// Update records an acquisition or a renewal.
func (f *Fence) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	begin := f.now()
	err := f.Interface.Update(ctx, ler)
	if err == nil {
		// The request's start, not its end: the lease counts from the
		// time written in it, which is before the request left.
		f.last.Store(begin.UnixNano())
	}
	return err
}

// Check returns an error unless the lease was held within the window.
func (f *Fence) Check() error {
	last := f.last.Load()
	if last == 0 {
		return fmt.Errorf("write refused: this replica has never held the leader lease")
	}
	if age := f.now().Sub(time.Unix(0, last)); age >= f.window {
		return fmt.Errorf("write refused: the leader lease was last renewed %s ago, longer than the renew deadline %s; another replica may lead now", age.Round(time.Millisecond), f.window)
	}
	return nil
}

// NewClient is a manager's client constructor (client.NewClientFunc)
// whose clients are wrapped by Client: the controller manager's and the
// agent's managers both build theirs this way.
func (f *Fence) NewClient(cfg *rest.Config, o client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(cfg, o)
	if err != nil {
		return nil, err
	}
	return f.Client(c), nil
}

// Client wraps c so that every write to the hub passes Check first.
func (f *Fence) Client(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.DeleteAllOf(ctx, obj, opts...)
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if err := f.Check(); err != nil {
				return err
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
}

// NewLeaseFence returns a Fence around a Lease lock ns/name held as
// identity (default: the host name and a random suffix), for a manager's
// LeaderElectionResourceLockInterface and its writes' fence.
func NewLeaseFence(cfg *rest.Config, ns, name, identity string, renewDeadline time.Duration) (*Fence, error) {
	lock, err := NewLeaseLock(cfg, ns, name, identity, renewDeadline)
	if err != nil {
		return nil, err
	}
	return NewFence(lock, renewDeadline), nil
}

// NewLeaseLock builds the Lease lock controller-runtime would, with the
// same identity scheme (host name and a random suffix) unless identity is
// given.
func NewLeaseLock(cfg *rest.Config, ns, name, identity string, renewDeadline time.Duration) (resourcelock.Interface, error) {
	if identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		identity = host + "_" + string(uuid.NewUUID())
	}
	return resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, ns, name,
		resourcelock.ResourceLockConfig{Identity: identity}, rest.CopyConfig(cfg), renewDeadline)
}
