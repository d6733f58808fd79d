package conformance_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/features"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

const catalogueDir = "testdata/catalogue"

// TestEveryCatalogueStepIsUsed fails when a step of the library is used by
// no feature, built-in or in testdata/catalogue: a step nobody runs is a
// step nobody knows to work.
func TestEveryCatalogueStepIsUsed(t *testing.T) {
	t.Parallel()
	var texts []string
	collect := func(uri string, b []byte) {
		newID := (&messages.Incrementing{}).NewId
		doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(b), newID)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		for _, p := range gherkin.Pickles(*doc, uri, newID) {
			for _, s := range p.Steps {
				texts = append(texts, s.Text)
			}
		}
	}
	err := fs.WalkDir(features.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".feature") {
			return err
		}
		b, err := fs.ReadFile(features.FS, p)
		collect(p, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(catalogueDir, "*.feature"))
	// docs/ runs every example of the catalogue in a feature of its own.
	files = append(files, "../docs/testdata/step-examples.feature")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		collect(f, b)
	}
	for _, s := range conformance.Steps() {
		re := regexp.MustCompile(s.Pattern)
		used := false
		for _, text := range texts {
			if used = re.MatchString(text); used {
				break
			}
		}
		if !used {
			t.Errorf("no feature uses the step %s (example: %s)", s.Pattern, strings.SplitN(s.Example, "\n", 2)[0])
		}
	}
}

// TestCatalogueFeaturePassesAgainstSandbox runs the steps the built-in suite
// does not use, the new ones among them, against the sandbox.
func TestCatalogueFeaturePassesAgainstSandbox(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	var summary bytes.Buffer
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Profile: kit.ProfileSandbox, Strict: true,
		NoBuiltin: true, FeatureDirs: []string{catalogueDir}, Summary: &summary, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, summary.String())
	}
	for _, s := range rep.Scenarios {
		if s.Status != kit.Passed {
			t.Errorf("%s (%s) %s: %s %s", s.Name, s.Location(), s.Status, s.SkipReason, s.Message)
		}
	}
	if len(rep.Scenarios) < 5 {
		t.Errorf("%d scenarios ran, want every one of %s\n%s", len(rep.Scenarios), catalogueDir, summary.String())
	}
}
