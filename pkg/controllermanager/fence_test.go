package controllermanager

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// memLock is an in-memory resourcelock.Interface whose writes can fail.
type memLock struct {
	rec  resourcelock.LeaderElectionRecord
	fail error
}

func (l *memLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r := l.rec
	return &r, nil, nil
}
func (l *memLock) Create(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	if l.fail != nil {
		return l.fail
	}
	l.rec = r
	return nil
}
func (l *memLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.Create(ctx, r)
}
func (l *memLock) RecordEvent(string) {}
func (l *memLock) Identity() string   { return "me" }
func (l *memLock) Describe() string   { return "mem" }

// TestFence: writes pass only while the lease was renewed within the renew
// deadline; a frozen leader that wakes up is refused until it renews, and
// a failed renewal does not count.
func TestFence(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lock := &memLock{}
	f := NewFence(lock, 10*time.Second)
	f.now = func() time.Time { return now }
	ctx := context.Background()
	c := f.Client(fake.NewClientBuilder().WithScheme(scheme.Scheme).Build())
	write := func(name string) error {
		return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
	}

	steps := []struct {
		name    string
		act     func()
		wantErr string
	}{
		{name: "never led", act: func() {}, wantErr: "never held"},
		{name: "acquired", act: func() { _ = f.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}) }},
		{name: "renewed 2 s later", act: func() { now = now.Add(2 * time.Second); _ = f.Update(ctx, resourcelock.LeaderElectionRecord{}) }},
		{name: "9 s after the renewal", act: func() { now = now.Add(9 * time.Second) }},
		{name: "frozen for 20 s", act: func() { now = now.Add(11 * time.Second) }, wantErr: "longer than the renew deadline"},
		{name: "a failed renewal does not help", act: func() {
			lock.fail = errors.New("conflict: held by another")
			_ = f.Update(ctx, resourcelock.LeaderElectionRecord{})
		}, wantErr: "renew deadline"},
		{name: "a successful renewal does", act: func() { lock.fail = nil; _ = f.Update(ctx, resourcelock.LeaderElectionRecord{}) }},
	}
	for i, s := range steps {
		s.act()
		err := write("cm-" + string(rune('a'+i)))
		if s.wantErr == "" && err != nil || s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)) {
			t.Fatalf("%s: write error %v, want %q", s.name, err, s.wantErr)
		}
	}
	// Every kind of write is fenced, reads are not.
	now = now.Add(time.Minute)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm-b"}}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatalf("a read was fenced: %v", err)
	}
	for name, w := range map[string]func() error{
		"update": func() error { return c.Update(ctx, cm) },
		"patch":  func() error { return c.Patch(ctx, cm, client.MergeFrom(cm.DeepCopy())) },
		"delete": func() error { return c.Delete(ctx, cm) },
		"status": func() error { return c.Status().Update(ctx, cm) },
		"deleteAllOf": func() error {
			return c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("default"))
		},
	} {
		if err := w(); err == nil || !strings.Contains(err.Error(), "write refused") {
			t.Errorf("%s passed a stale fence: %v", name, err)
		}
	}
}
