package failover

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/jsonpath"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// preservedLabels evaluates the state preservation rules against the raw
// status of the evicted copy and returns label key to value. Each rule
// that cannot be read (no status, a path that finds nothing or several
// values, a value that is not a valid label value) is left out and named
// in the error, so one bad rule does not lose the others.
func preservedLabels(sp *policyv1alpha1.StatePreservation, rawStatus []byte) (map[string]string, error) {
	if sp == nil || len(sp.Rules) == 0 {
		return nil, nil
	}
	if len(rawStatus) == 0 {
		return nil, errors.New("the evicted copy has no collected status to read")
	}
	var status any
	dec := json.NewDecoder(bytes.NewReader(rawStatus))
	dec.UseNumber() // 1000000 stays "1000000", not "1e+06"
	if err := dec.Decode(&status); err != nil {
		return nil, fmt.Errorf("decoding the evicted copy's status: %w", err)
	}
	out := map[string]string{}
	var errs []error
	for _, rule := range sp.Rules {
		v, err := readPath(rule.JSONPath, status)
		if err == nil {
			if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
				err = fmt.Errorf("value %q is not a valid label value: %s", v, strings.Join(msgs, "; "))
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rule %s (%s): %w", rule.AliasLabelName, rule.JSONPath, err))
			continue
		}
		out[rule.AliasLabelName] = v
	}
	return out, errors.Join(errs...)
}

// readPath evaluates a kubectl JSONPath that must find exactly one value.
func readPath(path string, data any) (string, error) {
	jp := jsonpath.New("statePreservation")
	if err := jp.Parse(path); err != nil {
		return "", fmt.Errorf("invalid JSONPath: %w", err)
	}
	results, err := jp.FindResults(data)
	if err != nil {
		return "", err
	}
	var values []string
	for _, r := range results {
		for _, v := range r {
			if !v.IsValid() {
				continue
			}
			values = append(values, fmt.Sprint(v.Interface()))
		}
	}
	switch len(values) {
	case 0:
		return "", errors.New("finds no value in the status")
	case 1:
		return values[0], nil
	}
	return "", fmt.Errorf("finds %d values; it must find one", len(values))
}
