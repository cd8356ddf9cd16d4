package scheduler

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// TestInTreePluginsArgs: every in-tree plugin builds with no args (its
// defaults) and refuses a field it does not know, naming it.
func TestInTreePluginsArgs(t *testing.T) {
	reg := InTreeRegistry()
	for _, name := range slices.Sorted(maps.Keys(reg)) {
		for _, ok := range []string{"", "{}"} {
			if p, err := reg[name](json.RawMessage(ok)); err != nil || p.Name() != name {
				t.Errorf("%s with args %q: %v", name, ok, err)
			}
		}
		_, err := reg[name](json.RawMessage(`{"bogus": 1}`))
		var fe *framework.FieldError
		if !errors.As(err, &fe) || fe.Field != "bogus" || !strings.Contains(fe.Message, "unknown field") {
			t.Errorf("%s with an unknown field: %v", name, err)
		}
	}
}
