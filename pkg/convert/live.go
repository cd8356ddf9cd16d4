package convert

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// This file reads a live Karmada control plane. The converter must never
// change it: a migration runs beside the fleet it migrates. So it is
// read-only twice over: the Lister it uses can only list, and the client
// under it refuses, before anything leaves the process, every request
// that is not a GET.

// LiveSource is the Source of the documents listed from a control plane.
const LiveSource = "karmada"

// KarmadaResources are the resources listed from a control plane.
var KarmadaResources = []schema.GroupVersionResource{
	{Group: KarmadaPolicyGroup, Version: version, Resource: "propagationpolicies"},
	{Group: KarmadaPolicyGroup, Version: version, Resource: "clusterpropagationpolicies"},
	{Group: KarmadaPolicyGroup, Version: version, Resource: "overridepolicies"},
	{Group: KarmadaPolicyGroup, Version: version, Resource: "clusteroverridepolicies"},
	{Group: KarmadaConfigGroup, Version: version, Resource: "resourceinterpretercustomizations"},
	{Group: KarmadaAutoscalingGroup, Version: version, Resource: "federatedhpas"},
	{Group: KarmadaAutoscalingGroup, Version: version, Resource: "cronfederatedhpas"},
}

// Lister lists one resource, in every namespace: all the converter ever
// asks of a control plane.
type Lister interface {
	List(ctx context.Context, gvr schema.GroupVersionResource) ([]unstructured.Unstructured, error)
}

// ReadOnly returns a copy of cfg whose client can only read: a request
// with any method but GET or HEAD fails without being sent.
func ReadOnly(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return readOnlyTransport{next: rt} })
	return c
}

type readOnlyTransport struct{ next http.RoundTripper }

func (t readOnlyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, fmt.Errorf("refusing %s %s: shepherd convert only reads the Karmada control plane", req.Method, req.URL.Path)
	}
	return t.next.RoundTrip(req)
}

// NewLister returns a Lister of the control plane cfg reaches, through a
// ReadOnly client. It keeps only the client's list function.
func NewLister(cfg *rest.Config) (Lister, error) {
	dc, err := dynamic.NewForConfig(ReadOnly(cfg))
	if err != nil {
		return nil, err
	}
	return pagedLister{list: func(ctx context.Context, gvr schema.GroupVersionResource, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		return dc.Resource(gvr).List(ctx, opts)
	}}, nil
}

type pagedLister struct {
	list func(context.Context, schema.GroupVersionResource, metav1.ListOptions) (*unstructured.UnstructuredList, error)
}

// List lists in pages of 500, so that a large control plane is not asked
// for everything in one response.
func (l pagedLister) List(ctx context.Context, gvr schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := l.list(ctx, gvr, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// ReadLive lists every resource of KarmadaResources. A resource the control
// plane does not serve (an older Karmada, or one without the autoscaling
// kinds) has no objects; any other error is an entry of the report.
func ReadLive(ctx context.Context, l Lister) ([]Document, []Entry) {
	var docs []Document
	var errs []Entry
	for _, gvr := range KarmadaResources {
		items, err := l.List(ctx, gvr)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, failed(LiveSource, 0, fmt.Sprintf("listing %s: %v", gvr.GroupResource(), err)))
			continue
		}
		for _, it := range items {
			docs = append(docs, Document{Source: LiveSource, Object: it.Object})
		}
	}
	return docs, errs
}
