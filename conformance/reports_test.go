package conformance_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// brokenPipe is an output that cannot be written, as a closed stdout.
type brokenPipe struct{}

var errBrokenPipe = errors.New("broken pipe")

func (brokenPipe) Write([]byte) (int, error) { return 0, errBrokenPipe }

// TestReportFilesSurviveAnOutputThatFails: when the human output cannot be
// written, the run says so, and the report files are still written.
func TestReportFilesSurviveAnOutputThatFails(t *testing.T) {
	t.Parallel()
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	junit := filepath.Join(t.TempDir(), "r.xml")
	f, err := os.Create(junit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := conformance.Run(t.Context(), kit.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Tags: "@versioning", Explore: -1,
		Format: kit.FormatProgress, Output: brokenPipe{},
		Reports: []kit.ReportFile{{Format: kit.FormatJUnit, Name: junit, W: f}},
	})
	if !errors.Is(err, errBrokenPipe) || rep == nil {
		t.Fatalf("Run with an output that fails: %v, report %v; want the write error and a report", err, rep != nil)
	}
	b, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(b), "<testsuite ") {
		t.Errorf("the junit file of the run: %v\n%.300s", err, b)
	}
}
