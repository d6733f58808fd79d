package docs_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
)

// TestShownShapesAreTheSandboxs holds the journal entry and the delivery
// record writing-features.md shows, which authors read JSON paths from, to
// the fields the sandbox writes: a field renamed, added or dropped there
// makes the page wrong.
func TestShownShapesAreTheSandboxs(t *testing.T) {
	blocks, err := readBlocks("writing-features.md", "json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, marker string
		written      any
	}{
		{"journal entry", `"carriedOut"`, accounts.LoggedRequest{}},
		{"delivery record", `"nextAttemptAt"`, sandbox.Delivery{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			i := slices.IndexFunc(blocks, func(b recipe) bool { return strings.Contains(b.text, tt.marker) })
			if i < 0 {
				t.Fatalf("writing-features.md shows no %s (a json block with %s)", tt.name, tt.marker)
			}
			var shown map[string]json.RawMessage
			if err := json.Unmarshal([]byte(blocks[i].text), &shown); err != nil {
				t.Fatalf("the %s at %s: %v", tt.name, blocks[i], err)
			}
			got := make([]string, 0, len(shown))
			for field := range shown {
				got = append(got, field)
			}
			slices.Sort(got)
			if diff := cmp.Diff(jsonFields(reflect.TypeOf(tt.written)), got); diff != "" {
				t.Errorf("the %s at %s is not the fields the sandbox writes (-written +shown):\n%s", tt.name, blocks[i], diff)
			}
		})
	}
}

// jsonFields are the names a struct always marshals with, sorted: those
// left out when empty are not on every entry, so a page need not show them.
func jsonFields(typ reflect.Type) []string {
	var names []string
	for field := range typ.Fields() {
		name, opts, _ := strings.Cut(field.Tag.Get("json"), ",")
		if name == "-" || !field.IsExported() || strings.Contains(opts, "omitempty") {
			continue
		}
		if name == "" {
			name = field.Name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
