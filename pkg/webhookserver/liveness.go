package webhookserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Replicas that serve one webhook each have their own CA. Each keeps a
// Lease holding its CA and renews it while it runs; a configuration's
// caBundle is the CAs of the live Leases. So a replica that starts never
// pushes out a live one (however often others restart), and a replica that
// is gone drops out once its Lease expires.

// Labels and annotations of the CA Leases.
const (
	// LabelCAConfiguration on a CA Lease names the webhook configuration.
	LabelCAConfiguration = "webhook.shepherd.io/configuration"
	// AnnotationCA on a CA Lease holds the replica's CA certificate (PEM).
	AnnotationCA = "webhook.shepherd.io/ca"
)

// DefaultCALeaseDuration is how long a replica's CA stays in the bundle
// without a renewal.
const DefaultCALeaseDuration = 60 * time.Second

// Liveness identifies a replica among those publishing their CAs into one
// webhook configuration.
type Liveness struct {
	// Namespace holds the CA Leases.
	Namespace string
	// Identity names the replica (default: the host name, a pod's name).
	// A replica restarted under the same identity replaces its CA.
	Identity string
	// LeaseDuration (default DefaultCALeaseDuration); renewed every third.
	LeaseDuration time.Duration
	// Now is the clock (tests).
	Now func() time.Time
}

func (l Liveness) withDefaults() (Liveness, error) {
	if l.Namespace == "" {
		return l, fmt.Errorf("webhook CA liveness: a namespace for the Leases is required")
	}
	if l.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return l, err
		}
		l.Identity = host
	}
	if l.LeaseDuration <= 0 {
		l.LeaseDuration = DefaultCALeaseDuration
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	return l, nil
}

// caLeaseName is the Lease of identity's CA for configuration.
func caLeaseName(configuration, identity string) string {
	sum := sha256.Sum256([]byte(configuration + "/" + identity))
	return "webhook-ca-" + hex.EncodeToString(sum[:8])
}

// PublishLive records caPEM in this replica's Lease, sets the caBundle of
// every webhook of the existing configuration named like obj to the CAs of
// the live Leases, and keeps doing both every third of the lease duration
// until ctx ends; then it removes its Lease and its CA.
func PublishLive[C Configuration](ctx context.Context, c client.Client, obj C, caPEM []byte, l Liveness, log logr.Logger) error {
	l, err := l.withDefaults()
	if err != nil {
		return err
	}
	if err := renewCALease(ctx, c, obj.GetName(), caPEM, l); err != nil {
		return fmt.Errorf("recording the CA in a Lease: %w", err)
	}
	if err := SyncCABundle(ctx, c, obj, l); err != nil {
		return err
	}
	go func() {
		tick := time.NewTicker(l.LeaseDuration / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				// Gone: take our CA out now rather than at expiry.
				stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: caLeaseName(obj.GetName(), l.Identity)}}
				if err := c.Delete(stop, lease); client.IgnoreNotFound(err) == nil {
					_ = SyncCABundle(stop, c, obj, l)
				}
				return
			case <-tick.C:
				if err := renewCALease(ctx, c, obj.GetName(), caPEM, l); err != nil {
					log.Error(err, "renewing the webhook CA Lease")
					continue
				}
				if err := SyncCABundle(ctx, c, obj, l); err != nil {
					log.Error(err, "updating the webhook CA bundle")
				}
			}
		}
	}()
	return nil
}

// renewCALease creates or renews this replica's Lease with caPEM.
func renewCALease(ctx context.Context, c client.Client, configuration string, caPEM []byte, l Liveness) error {
	now := metav1.NewMicroTime(l.Now())
	seconds := int32(l.LeaseDuration / time.Second)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease := &coordinationv1.Lease{}
		err := c.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: caLeaseName(configuration, l.Identity)}, lease)
		if apierrors.IsNotFound(err) {
			lease = &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: caLeaseName(configuration, l.Identity),
					Labels:      map[string]string{LabelCAConfiguration: configuration},
					Annotations: map[string]string{AnnotationCA: string(caPEM)}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &l.Identity, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now},
			}
			return c.Create(ctx, lease)
		}
		if err != nil {
			return err
		}
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		if lease.Annotations[AnnotationCA] != string(caPEM) {
			lease.Spec.AcquireTime = &now // a restart under the same identity
		}
		lease.Annotations[AnnotationCA] = string(caPEM)
		lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = &l.Identity, &seconds, &now
		return c.Update(ctx, lease)
	})
}

// liveCAs returns the CAs of the configuration's live Leases, ordered by
// Lease name, and deletes the expired ones.
func liveCAs(ctx context.Context, c client.Client, configuration string, l Liveness) ([]byte, error) {
	list := &coordinationv1.LeaseList{}
	if err := c.List(ctx, list, client.InNamespace(l.Namespace), client.MatchingLabels{LabelCAConfiguration: configuration}); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b coordinationv1.Lease) int { return strings.Compare(a.Name, b.Name) })
	var bundle bytes.Buffer
	now := l.Now()
	for i := range list.Items {
		lease := &list.Items[i]
		if !leaseLive(lease, now) {
			_ = c.Delete(ctx, lease, client.Preconditions{ResourceVersion: &lease.ResourceVersion})
			continue
		}
		bundle.WriteString(lease.Annotations[AnnotationCA])
	}
	return bundle.Bytes(), nil
}

func leaseLive(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false
	}
	return now.Before(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// SyncCABundle sets the caBundle of every webhook of the configuration
// named like obj to the CAs of its live Leases, if that changes it.
func SyncCABundle[C Configuration](ctx context.Context, c client.Client, obj C, l Liveness) error {
	l, err := l.withDefaults()
	if err != nil {
		return err
	}
	bundle, err := liveCAs(ctx, c, obj.GetName(), l)
	if err != nil {
		return fmt.Errorf("listing the webhook CA Leases: %w", err)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing := newLike(obj)
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
			return fmt.Errorf("reading the webhook configuration %s: %w", obj.GetName(), err)
		}
		changed := false
		for _, cc := range ClientConfigs(existing) {
			if !bytes.Equal(cc.CABundle, bundle) {
				cc.CABundle, changed = bundle, true
			}
		}
		if !changed {
			return nil
		}
		return c.Update(ctx, existing)
	})
}
