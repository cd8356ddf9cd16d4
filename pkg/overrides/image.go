package overrides

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// applyImage applies one imageOverrider: to the image at predicate.path, or
// without a predicate to every container and init container image of a
// kind with a pod spec (see Kinds).
func applyImage(kinds Kinds, obj *unstructured.Unstructured, o *policyv1alpha1.ImageOverrider) error {
	if o.Predicate != nil {
		ptr, err := jsonpointer.Parse(o.Predicate.Path)
		if err != nil {
			return fmt.Errorf("predicate: %w", err)
		}
		v, err := ptr.Get(obj.Object)
		if err != nil {
			return fmt.Errorf("predicate.path %s: %w", o.Predicate.Path, err)
		}
		ref, ok := v.(string)
		if !ok {
			return fmt.Errorf("predicate.path %s holds %s, not an image", o.Predicate.Path, jsonpointer.Kind(v))
		}
		changed, err := overrideImage(ref, o)
		if err != nil {
			return err
		}
		return ptr.Set(obj.Object, changed)
	}
	specPath, ok := podSpecPath(kinds, obj)
	if !ok {
		return fmt.Errorf("%s has no container images; add predicate.path or narrow resourceSelectors", obj.GetKind())
	}
	return eachContainer(obj, specPath, func(c map[string]any, where string) error {
		v, ok := c["image"]
		if !ok {
			return nil
		}
		ref, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s.image holds %s, not an image", where, jsonpointer.Kind(v))
		}
		changed, err := overrideImage(ref, o)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		c["image"] = changed
		return nil
	})
}

// overrideImage changes one component of ref as Karmada does:
//
//   - add appends value to the component (registry.example + "-cn"),
//   - replace sets it,
//   - remove clears it.
//
// The Tag component is the tag, or the digest when the image has no tag;
// a replace (or add) value that is a digest sets the digest and drops the
// tag, one that is a tag sets the tag and drops the digest, as in Karmada.
// An image with both keeps its digest when its tag is removed.
//
// Unlike Karmada, which leaves the image alone or writes an unusable one,
// a change that does not give a valid reference, or gives one that reads
// back differently (a registry without a dot or port reads as part of the
// repository), is an error.
func overrideImage(ref string, o *policyv1alpha1.ImageOverrider) (string, error) {
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace:
	default:
		return "", fmt.Errorf("operator %q: use add, remove or replace", o.Operator)
	}
	if o.Operator != policyv1alpha1.OverriderOpRemove && o.Value == "" {
		return "", fmt.Errorf("%s %s needs a value", o.Operator, o.Component)
	}
	img, err := parseImage(ref)
	if err != nil {
		return "", err
	}
	value := o.Value
	switch o.Component {
	case policyv1alpha1.Registry:
		img.Registry = combine(o.Operator, img.Registry, value)
	case policyv1alpha1.Repository:
		img.Repository = combine(o.Operator, img.Repository, value)
	case policyv1alpha1.Tag:
		current := img.Tag
		if current == "" {
			current = img.Digest
		}
		switch o.Operator {
		case policyv1alpha1.OverriderOpRemove:
			if img.Tag != "" {
				img.Tag = ""
			} else {
				img.Digest = ""
			}
		case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace:
			v := combine(o.Operator, current, value)
			switch {
			case tagRE.MatchString(v):
				img.Tag, img.Digest = v, ""
			case digestRE.MatchString(v):
				img.Tag, img.Digest = "", v
			default:
				return "", fmt.Errorf("image %q: %s tag %q gives %q, neither a tag nor a digest", ref, o.Operator, value, v)
			}
		}
	default:
		return "", fmt.Errorf("component %q: use Registry, Repository or Tag", o.Component)
	}
	out := img.String()
	back, err := parseImage(out)
	if err != nil {
		return "", fmt.Errorf("%s %s %q on image %q: %w", o.Operator, o.Component, value, ref, err)
	}
	if back != img {
		return "", fmt.Errorf("%s %s %q on image %q gives %q, which reads as registry %q and repository %q; a registry needs a dot or a port, or must be localhost",
			o.Operator, o.Component, value, ref, out, back.Registry, back.Repository)
	}
	return out, nil
}

func combine(op policyv1alpha1.OverriderOperator, current, value string) string {
	switch op {
	case policyv1alpha1.OverriderOpAdd:
		return current + value
	case policyv1alpha1.OverriderOpReplace:
		return value
	}
	return ""
}
