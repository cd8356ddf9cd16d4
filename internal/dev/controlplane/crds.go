package controlplane

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// crdPollInterval is how often CRD conditions are re-read. Establishing a
// CRD takes well under a second locally, so a short interval keeps startup
// latency down.
const crdPollInterval = 100 * time.Millisecond

// InstallCRDs creates or updates every CRD, then waits until all of them are
// Established and served in discovery, so callers can immediately create
// custom objects and build REST mappers that know them (Established comes
// a moment before discovery lists a new kind).
func InstallCRDs(ctx context.Context, log logr.Logger, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	if len(crds) == 0 {
		return nil
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building apiextensions client: %w", err)
	}
	client := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if crd == nil {
			return fmt.Errorf("nil CRD in Options.CRDs")
		}
		if err := applyCRD(ctx, client, crd); err != nil {
			return err
		}
		log.V(1).Info("applied CRD", "name", crd.Name)
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, client, crd.Name); err != nil {
			return err
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building discovery client: %w", err)
	}
	for _, crd := range crds {
		if err := waitDiscovered(ctx, dc, crd); err != nil {
			return err
		}
	}
	return nil
}

// waitDiscovered polls until discovery lists the CRD's resource in every
// version it serves.
func waitDiscovered(ctx context.Context, dc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := crd.Spec.Group + "/" + v.Name
		err := wait.PollUntilContextCancel(ctx, crdPollInterval, true, func(context.Context) (bool, error) {
			list, err := dc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				return false, nil
			}
			for _, r := range list.APIResources {
				if r.Name == crd.Spec.Names.Plural {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for %s %s in discovery: %w", gv, crd.Spec.Names.Plural, err)
		}
	}
	return nil
}

type crdClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Create(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts metav1.CreateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Update(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts metav1.UpdateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}

// applyCRD is a plain create-or-update (not server-side apply) so the
// stored CRD exactly matches what the binary ships, including removals.
func applyCRD(ctx context.Context, client crdClient, crd *apiextensionsv1.CustomResourceDefinition) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing, err := client.Get(ctx, crd.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = client.Create(ctx, crd.DeepCopy(), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				// Lost a race with another writer: retry as an update.
				return apierrors.NewConflict(apiextensionsv1.Resource("customresourcedefinitions"), crd.Name, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		desired := crd.DeepCopy()
		desired.ResourceVersion = existing.ResourceVersion
		_, err = client.Update(ctx, desired, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("installing CRD %s: %w", crd.Name, err)
	}
	return nil
}

// waitEstablished polls until the CRD is Established, failing fast when the
// apiserver refuses its names (NamesAccepted=False never recovers by itself).
func waitEstablished(ctx context.Context, client crdClient, name string) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, crdPollInterval, true, func(ctx context.Context) (bool, error) {
		crd, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, c := range crd.Status.Conditions {
			switch {
			case c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse:
				return false, fmt.Errorf("names not accepted: %s", c.Message)
			case c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue:
				return true, nil
			case c.Type == apiextensionsv1.Established:
				last = c.Message
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established (last: %q): %w", name, last, err)
	}
	return nil
}
