package profile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// TestDocsExample: the example of docs/scheduling.md loads, and does what
// its comments say.
func TestDocsExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "scheduling.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## The scheduler's configuration file")
	_, example, ok2 := strings.Cut(section, "```yaml\n")
	example, _, ok3 := strings.Cut(example, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("no yaml example under \"## The scheduler's configuration file\"")
	}
	got, err := Load([]byte(example), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := scheduler.DefaultProfile()
	want.Scores = []framework.WeightedPlugin{{Name: "Locality", Weight: 4}, {Name: "PreferredAffinity", Weight: 5}}
	want.Args = map[string]json.RawMessage{"ResourceFit": json.RawMessage("{}")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the example gives\n %+v\nwant\n %+v", got, want)
	}
}
