package webhookserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

func deployedConfiguration(name string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	none := admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "validate.example.com",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "shepherd-system", Name: "webhook", Path: ptr.To("/validate")}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"gadgets"}},
			}},
		}},
	}
}

func newCA(t *testing.T) []byte {
	t.Helper()
	s, err := newSelfSigned("test", nil, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s.caPEM
}

// TestCABundleFollowsLiveReplicas: a replica keeps serving while 8 others
// start and die one after the other (as a crash-looping pod would): its CA
// is in the caBundle the whole time, and the dead ones' CAs leave once
// their Leases expire.
func TestCABundleFollowsLiveReplicas(t *testing.T) {
	testenv.Heavy(t)
	dir := t.TempDir()
	hub, err := testenv.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hub.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	})
	ctx := context.Background()
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shepherd-system"}}); err != nil {
		t.Fatal(err)
	}
	cfg := deployedConfiguration("test-validation")
	if err := c.Create(ctx, cfg.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	bundle := func() []byte {
		got := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cfg), got); err != nil {
			t.Fatal(err)
		}
		return got.Webhooks[0].ClientConfig.CABundle
	}

	const lease = 3 * time.Second
	liveCA := newCA(t)
	liveCtx, stopLive := context.WithCancel(ctx)
	defer stopLive()
	if err := PublishLive(liveCtx, c, cfg, liveCA, Liveness{Namespace: "shepherd-system", Identity: "live", LeaseDuration: lease}, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bundle(), liveCA) {
		t.Fatal("the live replica's CA is not the bundle")
	}

	var dead [][]byte
	for i := range 8 {
		// A replica that starts, publishes and dies before renewing.
		ca := newCA(t)
		dead = append(dead, ca)
		l := Liveness{Namespace: "shepherd-system", Identity: fmt.Sprintf("crashing-%d", i), LeaseDuration: lease}
		l, _ = l.withDefaults()
		if err := renewCALease(ctx, c, cfg.Name, ca, l); err != nil {
			t.Fatal(err)
		}
		if err := SyncCABundle(ctx, c, cfg, l); err != nil {
			t.Fatal(err)
		}
		b := bundle()
		if !bytes.Contains(b, liveCA) {
			t.Fatalf("restart %d pushed the live replica's CA out of the bundle", i+1)
		}
		if !bytes.Contains(b, ca) {
			t.Fatalf("restart %d: its own CA is not in the bundle", i+1)
		}
	}

	// The dead replicas' Leases expire; the live one's renewals drop them.
	testenv.Eventually(t, 5*lease, "only the live CA left", func() error {
		b := bundle()
		for i, ca := range dead {
			if bytes.Contains(b, ca) {
				return fmt.Errorf("dead replica %d's CA still in the bundle", i)
			}
		}
		if !bytes.Equal(b, liveCA) {
			return fmt.Errorf("bundle of %d bytes is not the live CA", len(b))
		}
		return nil
	})

	// The live replica stops: its CA leaves with it.
	stopLive()
	testenv.Eventually(t, 10*time.Second, "empty bundle after the last replica stopped", func() error {
		if b := bundle(); len(b) != 0 {
			return fmt.Errorf("bundle of %d bytes", len(b))
		}
		return nil
	})
}
