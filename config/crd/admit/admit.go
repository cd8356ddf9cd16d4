// Package admit checks custom resources against their CustomResourceDefinition
// offline, the way the API server admits them: unknown fields pruned,
// defaults applied, then the OpenAPI schema (types, enums, bounds,
// patterns), the embedded objects' metadata, the keys of lists of type map
// and set, and the CEL rules of x-kubernetes-validations, with the API
// server's cost limits. It is the one implementation behind the CRDs'
// tests (config/crd) and `shepherd convert`, which refuses to write an
// object the hub would refuse.
//
// The package takes the CRD as an argument and does not import config/crd,
// so that config/crd's own tests can use it.
package admit

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// NotChecked is the detail of the error the API server adds when it skips
// the CEL rules because the schema already refused the object (a missing
// required field, a value of the wrong type, an enum or a bound on a
// list's or a string's length): the rules are checked once those are
// fixed. It names no field.
const NotChecked = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// Validator admits the objects of one CRD. Build it once and reuse it: it
// compiles the CRD's CEL rules when built. It is safe for concurrent use.
type Validator struct {
	// Kind is the CRD's kind.
	Kind       string
	namespaced bool
	versions   map[string]*version
}

// version is what admits the objects of one served version.
type version struct {
	schema apiservervalidation.SchemaValidator
	// structural is the schema with its defaults pruned, as the API server
	// serves it: it prunes, defaults and checks the list keys.
	structural *structuralschema.Structural
	cel        *cel.Validator
}

// New builds the validator of a CRD, for each version it serves.
func New(c *apiextensionsv1.CustomResourceDefinition) (*Validator, error) {
	v := &Validator{Kind: c.Spec.Names.Kind, namespaced: c.Spec.Scope == apiextensionsv1.NamespaceScoped, versions: map[string]*version{}}
	for _, ver := range c.Spec.Versions {
		if !ver.Served || ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(ver.Schema, internal, nil); err != nil {
			return nil, fmt.Errorf("CRD %s version %s: %w", c.Name, ver.Name, err)
		}
		schema, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("CRD %s version %s: %w", c.Name, ver.Name, err)
		}
		structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("CRD %s version %s: the schema is not structural: %w", c.Name, ver.Name, err)
		}
		structural = structural.DeepCopy()
		if err := defaulting.PruneDefaults(structural); err != nil {
			return nil, fmt.Errorf("CRD %s version %s: %w", c.Name, ver.Name, err)
		}
		v.versions[ver.Name] = &version{
			schema:     schema,
			structural: structural,
			cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
		}
	}
	if len(v.versions) == 0 {
		return nil, fmt.Errorf("CRD %s serves no version with a schema", c.Name)
	}
	return v, nil
}

// CheckCRD returns what the API server would answer a create of the CRD
// itself with (the estimated cost of its CEL rules among the rest), nil
// when it would accept it.
func CheckCRD(c *apiextensionsv1.CustomResourceDefinition) error {
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(c, internal, nil); err != nil {
		return err
	}
	// As after the first create: the API server fills this in.
	for _, ver := range internal.Spec.Versions {
		if ver.Storage {
			internal.Status.StoredVersions = []string{ver.Name}
		}
	}
	return crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal).ToAggregate()
}

// Create returns the errors the API server answers a create of obj with,
// none when it admits it. obj is not changed: it is copied as the API
// server decodes it (whole numbers as int64, which CEL compares with
// integers), then pruned and defaulted.
func (v *Validator) Create(obj map[string]any) field.ErrorList {
	return v.admit(obj, nil)
}

// Update is Create for an update from old: the CEL rules that read oldSelf
// apply, and a list whose keys old already repeated is not held to them.
func (v *Validator) Update(obj, old map[string]any) field.ErrorList {
	if old == nil {
		old = map[string]any{}
	}
	return v.admit(obj, old)
}

func (v *Validator) version(obj map[string]any) (*version, error) {
	u := unstructured.Unstructured{Object: obj}
	gv := u.GroupVersionKind()
	if gv.Kind != v.Kind {
		return nil, fmt.Errorf("kind %q is not %s", gv.Kind, v.Kind)
	}
	ver, ok := v.versions[gv.Version]
	if !ok {
		return nil, fmt.Errorf("%s has no version %q", v.Kind, gv.Version)
	}
	return ver, nil
}

// decode copies obj as the API server decodes, prunes and defaults it.
func (ver *version) decode(obj map[string]any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	pruning.Prune(out, ver.structural, true)
	defaulting.PruneNonNullableNullsWithoutDefaults(out, ver.structural)
	defaulting.Default(out, ver.structural)
	return out, nil
}

func (v *Validator) admit(obj, old map[string]any) field.ErrorList {
	ver, err := v.version(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("apiVersion"), obj["apiVersion"], err.Error())}
	}
	u, err := ver.decode(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var uOld map[string]any
	if old != nil {
		if uOld, err = ver.decode(old); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
	}
	uu := &unstructured.Unstructured{Object: u}
	errs := metavalidation.ValidateObjectMetaAccessor(uu, v.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u, ver.schema)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, u, ver.structural, false)...)
	if uOld == nil || len(listtype.ValidateListSetsAndMaps(nil, ver.structural, uOld)) == 0 {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, ver.structural, u)...)
	}
	if ver.cel == nil {
		return errs
	}
	if blocking(errs) {
		return append(errs, field.Invalid(nil, nil, NotChecked))
	}
	var celErrs field.ErrorList
	if uOld == nil {
		celErrs, _ = ver.cel.Validate(context.Background(), nil, ver.structural, u, nil, celconfig.RuntimeCELCostBudget)
	} else {
		celErrs, _ = ver.cel.Validate(context.Background(), nil, ver.structural, u, uOld, celconfig.RuntimeCELCostBudget)
	}
	return append(errs, celErrs...)
}

// blocking reports whether the API server skips the CEL rules after errs:
// the rules could not be evaluated over such an object.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}
