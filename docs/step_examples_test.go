package docs_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// stepExamples is the feature that runs every example of the catalogue.
const stepExamples = "testdata/step-examples.feature"

// writtenStep is a step as a feature holds it: its text without the
// keyword (Given, When, Then and And are interchangeable) and its doc
// string, if any.
type writtenStep struct{ text, docString string }

// exampleStep reads a catalogue example as the step it shows.
func exampleStep(example string) writtenStep {
	first, rest, _ := strings.Cut(example, "\n")
	_, text, _ := strings.Cut(first, " ")
	var doc []string
	for _, line := range strings.Split(rest, "\n") {
		if line = strings.TrimSpace(line); line != `"""` && line != "" {
			doc = append(doc, line)
		}
	}
	return writtenStep{text, strings.Join(doc, "\n")}
}

// featurePickles reads the scenarios of a feature file as godog runs
// them, one per scenario and per row of an outline's examples.
func featurePickles(t *testing.T, path string) []*messages.Pickle {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	newID := (&messages.Incrementing{}).NewId
	doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(b), newID)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return gherkin.Pickles(*doc, path, newID)
}

// featureSteps reads every step of a feature file.
func featureSteps(t *testing.T, path string) []writtenStep {
	t.Helper()
	var out []writtenStep
	for _, p := range featurePickles(t, path) {
		for _, s := range p.Steps {
			w := writtenStep{text: s.Text}
			if s.Argument != nil && s.Argument.DocString != nil {
				w.docString = strings.TrimSpace(s.Argument.DocString.Content)
			}
			out = append(out, w)
		}
	}
	return out
}

// TestEveryStepExampleIsRun fails when an example of the catalogue, as
// `conform steps` and writing-features.md show it, is in no scenario of
// the feature TestStepExamplesRunAgainstTheSandbox runs.
func TestEveryStepExampleIsRun(t *testing.T) {
	have := map[writtenStep]bool{}
	for _, s := range featureSteps(t, stepExamples) {
		have[s] = true
	}
	for _, s := range conformance.Steps() {
		if w := exampleStep(s.Example); !have[w] {
			t.Errorf("the example %q is in no scenario of %s, which runs them against the sandbox", s.Example, stepExamples)
		}
	}
}

// TestStepExamplesRunAgainstTheSandbox runs every example of the
// catalogue against a sandbox with a frozen clock: an example naming an
// endpoint that does not exist, or a shape the sandbox does not answer,
// fails here. (TestFeatureSnippetsPass runs the ```gherkin blocks of the
// pages.)
func TestStepExamplesRunAgainstTheSandbox(t *testing.T) {
	srv := sandboxtest.NewServer(t, sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), WebhookRetry: 100 * time.Millisecond})
	var summary bytes.Buffer
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: "svc_test_docs_examples", Profile: kit.ProfileSandbox, Strict: true,
		NoBuiltin: true, FeatureDirs: []string{stepExamples}, Summary: &summary, Timeout: time.Minute, Explore: -1,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, summary.String())
	}
	for _, s := range rep.Scenarios {
		if s.Status != kit.Passed {
			t.Errorf("%s (%s) %s: %s %s", s.Name, s.Location(), s.Status, s.SkipReason, s.Message)
		}
	}
	if want := len(featurePickles(t, stepExamples)); len(rep.Scenarios) != want {
		t.Errorf("%d scenarios ran, want the %d of %s\n%s", len(rep.Scenarios), want, stepExamples, summary.String())
	}
}
