package docs_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
)

var update = flag.Bool("update", false, "rewrite the generated step catalogue in writing-features.md")

const (
	catalogueFile  = "writing-features.md"
	catalogueBegin = "<!-- generated steps: begin -->\n"
	catalogueEnd   = "<!-- generated steps: end -->\n"
)

// stepCatalogue renders the kit's step library as the page shows it: a
// step as a feature would write it, then the expression godog matches.
func stepCatalogue(steps []kit.StepDoc, placeholders []string) string {
	var b strings.Builder
	b.WriteString("| example | pattern | needs |\n|---|---|---|\n")
	for _, s := range steps {
		example, docString, _ := strings.Cut(s.Example, "\n")
		cell := code(example)
		if docString != "" {
			cell += " + a doc string"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell, code(s.Pattern), s.Requires())
	}
	fmt.Fprintf(&b, "\nPlaceholders in `should match:` documents: %s.\n", code(strings.Join(placeholders, " ")))
	return b.String()
}

// code writes text as a code span that survives a table cell.
func code(text string) string {
	text = strings.ReplaceAll(text, "|", `\|`)
	if strings.Contains(text, "`") {
		return "`` " + text + " ``"
	}
	return "`" + text + "`"
}

// TestStepCatalogue fails when the catalogue on the page is not the kit's.
func TestStepCatalogue(t *testing.T) {
	page, err := os.ReadFile(catalogueFile)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(page), catalogueBegin)
	_, after, ok2 := strings.Cut(rest, catalogueEnd)
	if !ok || !ok2 {
		t.Fatalf("%s has no %q … %q region for the catalogue", catalogueFile, catalogueBegin, catalogueEnd)
	}
	want := before + catalogueBegin + stepCatalogue(conformance.Steps(), conformance.PlaceholderNames()) + catalogueEnd + after
	if *update {
		if err := os.WriteFile(catalogueFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, string(page)); diff != "" {
		t.Errorf("the step catalogue in %s is stale; rewrite it with go test ./docs -run TestStepCatalogue -update (-want +got):\n%s", catalogueFile, diff)
	}
}

// TestStepCatalogueChangesWithTheKit shows the comparison is not empty: a
// step added to the kit changes the page.
func TestStepCatalogueChangesWithTheKit(t *testing.T) {
	steps := conformance.Steps()
	placeholders := conformance.PlaceholderNames()
	added := append(steps[:len(steps):len(steps)], kit.StepDoc{Pattern: `^a new step$`, Example: "Given a new step"})
	if stepCatalogue(steps, placeholders) == stepCatalogue(added, placeholders) {
		t.Error("a step added to the kit leaves the catalogue as it was")
	}
	if !strings.Contains(stepCatalogue(steps, placeholders), code(steps[0].Pattern)) {
		t.Errorf("the catalogue lacks the kit's first step %s", steps[0].Pattern)
	}
}
