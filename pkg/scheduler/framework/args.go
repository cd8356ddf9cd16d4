package framework

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sigsjson "sigs.k8s.io/json"
)

// FieldError is an invalid field of a plugin's args (or of any document
// DecodeStrict reads). Field is its path inside the document ("" for the
// document as a whole), so that a configuration file can report it under
// its own path ("profiles[0].pluginConfig[1].args.maxClusters: must be
// positive").
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Args are a plugin's typed arguments. Validate returns a *FieldError
// naming the field at fault (any other error is reported against the args
// as a whole).
type Args interface {
	Validate() error
}

// DecodeArgs decodes a plugin's raw arguments over its defaults and
// validates the result: a field the args leave out keeps its default, so
// empty args (nil, "null" or "{}") give the defaults. Decoding is strict:
// an unknown or repeated field is refused, by name, rather than silently
// ignored (a misspelt field would otherwise leave a default in force
// unnoticed).
func DecodeArgs[A Args](raw json.RawMessage, defaults A) (A, error) {
	args := defaults
	if err := DecodeStrict(raw, &args); err != nil {
		return defaults, err
	}
	if err := args.Validate(); err != nil {
		var ae *FieldError
		if errors.As(err, &ae) {
			return defaults, ae
		}
		return defaults, &FieldError{Message: err.Error()}
	}
	return args, nil
}

// NoArgs checks the args of a plugin that takes none: only empty args are
// accepted, so a field meant for another plugin is not silently dropped.
func NoArgs(raw json.RawMessage) error {
	var none struct{}
	if err := DecodeStrict(raw, &none); err != nil {
		var ae *FieldError
		if errors.As(err, &ae) && ae.Field != "" {
			ae.Message += " (the plugin takes no arguments)"
		}
		return err
	}
	return nil
}

// DecodeStrict decodes JSON into v (nothing when raw is empty), refusing
// unknown and repeated fields; its errors are *FieldErrors naming the path.
func DecodeStrict(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	strict, err := sigsjson.UnmarshalStrict(raw, v, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return &FieldError{Field: te.Field, Message: fmt.Sprintf("cannot take a JSON %s; want %s", te.Value, te.Type)}
		}
		return &FieldError{Message: "not a valid document: " + err.Error()}
	}
	if len(strict) > 0 {
		return strictFieldError(strict[0])
	}
	return nil
}

// strictFieldError turns a strict decoding error of sigs.k8s.io/json
// ("unknown field \"a.b\"") into an FieldError for the field's path.
func strictFieldError(err error) *FieldError {
	var fp interface{ FieldPath() string }
	if !errors.As(err, &fp) {
		return &FieldError{Message: err.Error()}
	}
	msg := "unknown field; check its spelling, or remove it"
	if strings.HasPrefix(err.Error(), "duplicate") {
		msg = "given twice; keep one"
	}
	return &FieldError{Field: fp.FieldPath(), Message: msg}
}
