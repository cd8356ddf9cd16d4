package controlplane

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	readyPollInterval = 100 * time.Millisecond
	// readyRequestTimeout keeps a single probe from eating the whole start
	// budget when the listener accepts but the handler chain is not up yet.
	readyRequestTimeout = 5 * time.Second
)

// waitReady polls /readyz with the admin credentials until it returns ok,
// then waits for the "default" namespace, which the apiserver creates
// asynchronously and which callers commonly assume exists.
func waitReady(ctx context.Context, cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = readyRequestTimeout
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building readiness client: %w", err)
	}
	var last string
	err = wait.PollUntilContextCancel(ctx, readyPollInterval, true, func(ctx context.Context) (bool, error) {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			last = fmt.Sprintf("%v: %s", err, body)
			return false, nil
		}
		return string(body) == "ok", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kube-apiserver /readyz (last: %q): %w", last, context.Cause(ctx))
	}
	err = wait.PollUntilContextCancel(ctx, readyPollInterval, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			last = err.Error()
		}
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the default namespace (last: %q): %w", last, context.Cause(ctx))
	}
	return nil
}
