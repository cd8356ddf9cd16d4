package admission

import (
	"context"
	"net/http"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// SpecValidator is a validating webhook for one kind whose rules the API
// server's schema cannot check (CEL to compile, pointers to parse): it
// admits an object Validate finds nothing wrong with, and refuses the
// rest with Invalid. An update that leaves the spec alone is always
// admitted, so that an object stored before the webhook existed (or while
// it was down) can still get its finalizers, labels or status changed, or
// be deleted.
type SpecValidator[T client.Object] struct {
	// Kind names the kind in refusals.
	Kind schema.GroupKind
	// New returns an empty object of the kind.
	New func() T
	// Spec returns what an update must change to be checked.
	Spec func(T) any
	// Validate lists what is wrong with an object.
	Validate func(T) field.ErrorList
}

// Handler returns the webhook's HTTP handler, served at path.
func (v SpecValidator[T]) Handler(scheme *runtime.Scheme, path string, log logr.Logger) (http.Handler, error) {
	return admission.StandaloneWebhook(&admission.Webhook{Handler: v.Admission(scheme)},
		admission.StandaloneOptions{Logger: log, MetricsPath: path})
}

// Admission returns the admission handler behind Handler.
func (v SpecValidator[T]) Admission(scheme *runtime.Scheme) admission.Handler {
	return &specHandler[T]{v: v, decoder: admission.NewDecoder(scheme)}
}

type specHandler[T client.Object] struct {
	v       SpecValidator[T]
	decoder admission.Decoder
}

func (h *specHandler[T]) Handle(_ context.Context, req admission.Request) admission.Response {
	obj := h.v.New()
	if err := h.decoder.Decode(req, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := h.v.New()
		if err := h.decoder.DecodeRaw(req.OldObject, old); err == nil && equality.Semantic.DeepEqual(h.v.Spec(old), h.v.Spec(obj)) {
			return admission.Allowed("spec unchanged")
		}
	}
	if errs := h.v.Validate(obj); len(errs) > 0 {
		return Invalid(h.v.Kind, obj.GetName(), errs)
	}
	return admission.Allowed("")
}
