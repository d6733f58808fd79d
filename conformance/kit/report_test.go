package kit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/testcampaign/kit/docs"
)

func TestReportsNameTheBuildThatWroteThem(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"v1.2.0 (18dbf26abcde)", "conform v1.2.0 (18dbf26abcde)"},
		{"", "conform"},
	} {
		rep := &Report{Version: tt.version, BaseURL: "http://127.0.0.1:8080", Settings: Settings{Profile: "sandbox"},
			Scenarios: []ScenarioResult{{URI: "features/auth.feature", Line: 3, Name: "n", Area: "auth", Level: docs.Must, Status: Passed}}}
		var junit, summary bytes.Buffer
		if err := rep.WriteJUnit(&junit); err != nil {
			t.Fatal(err)
		}
		rep.WriteSummary(&summary)
		if !strings.Contains(junit.String(), `name="`+tt.want+`"`) {
			t.Errorf("junit for version %q does not name %q:\n%s", tt.version, tt.want, junit.String())
		}
		if first := strings.SplitN(strings.TrimLeft(summary.String(), "\n"), "\n", 2)[0]; !strings.HasPrefix(first, tt.want+" ") {
			t.Errorf("summary for version %q starts %q, want %q", tt.version, first, tt.want)
		}
	}
}

// TestDisabledScenariosAreSummarisedNotTested: the scenarios a run's
// configuration left out are counted once, with their reasons, never as
// junit test cases, so that the CI test tab holds as many tests as the
// summary counts scenarios.
func TestDisabledScenariosAreSummarisedNotTested(t *testing.T) {
	sandboxOnly := "not selected by --profile spec (@sandbox)"
	rep := &Report{BaseURL: "http://127.0.0.1:8080", Settings: Settings{Profile: "spec"}}
	add := func(n int, st Status, reason string) {
		for i := range n {
			rep.Scenarios = append(rep.Scenarios, ScenarioResult{URI: "features/auth.feature", Line: 3 + i, Name: fmt.Sprintf("%s %d", st, i),
				Area: "auth", Level: docs.Must, Status: st, SkipReason: reason})
		}
	}
	add(3, Passed, "")
	add(1, Skipped, "no clock")
	add(5, Disabled, sandboxOnly)
	rep.Scenarios = append(rep.Scenarios, ScenarioResult{URI: "features/clock.feature", Line: 1, Name: "only disabled", Area: "clock", Level: docs.Sandbox, Status: Disabled, SkipReason: sandboxOnly})

	var junit, summary bytes.Buffer
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	rep.WriteSummary(&summary)
	var doc struct {
		Tests   int `xml:"tests,attr"`
		Skipped int `xml:"skipped,attr"`
		Props   []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Skipped *struct {
					Type string `xml:"type,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, s := range doc.Suites {
		if strings.Contains(s.Name, "clock.feature") {
			t.Errorf("a suite of disabled scenarios only is in the junit report: %q", s.Name)
		}
		for _, c := range s.Cases {
			cases++
			if c.Skipped != nil && c.Skipped.Type == "disabled" {
				t.Errorf("a disabled scenario is a junit test case")
			}
		}
	}
	if doc.Tests != 4 || cases != 4 || doc.Skipped != 1 {
		t.Errorf("junit counts tests=%d (%d cases) skipped=%d, want 4 tests and 1 skipped", doc.Tests, cases, doc.Skipped)
	}
	props := map[string]string{}
	for _, p := range doc.Props {
		props[p.Name] = p.Value
	}
	want := map[string]string{"scenarios": "4", "disabled": "6", "disabled.reason": "6: " + sandboxOnly}
	if diff := cmp.Diff(want, props, cmpopts.IgnoreMapEntries(func(k, _ string) bool { _, ok := want[k]; return !ok })); diff != "" {
		t.Errorf("junit properties (-want +got):\n%s", diff)
	}
	if line := "4 scenarios: 3 passed, 0 failed, 0 warnings, 0 errors, 1 skipped; 6 disabled"; !strings.Contains(summary.String(), "RESULT: CONFORMANT: "+line) || rep.Counts() != line {
		t.Errorf("the summary's count is not %q:\n%s", line, summary.String())
	}
}

// TestConnectionErrorsAreOneCause: scenarios that could not reach the
// deployment, each at its own step, are one entry of the summary.
func TestConnectionErrorsAreOneCause(t *testing.T) {
	rep := &Report{BaseURL: "http://127.0.0.1:8080"}
	for i, path := range []string{"/v1/bugs", "/v1/testers", "/v1/campaigns"} {
		rep.Scenarios = append(rep.Scenarios, ScenarioResult{URI: "features/bugs.feature", Line: 3 + i, Name: path, Area: "bugs",
			Level: docs.Must, Status: Errored, FailedStep: "I send a GET request to \"" + path + "\"",
			Message: "connection error: GET http://127.0.0.1:8080" + path + ": connect: connection refused"})
	}
	var summary bytes.Buffer
	rep.WriteSummary(&summary)
	if !strings.Contains(summary.String(), "(1 in 3 scenario(s))") || strings.Count(summary.String(), "connection refused") != 1 {
		t.Errorf("connection errors are not one cause:\n%s", summary.String())
	}
}

// TestSummaryNamesTheExplorersRequestsAndSeed: a run of the explorer says
// how many requests it sent and from which seed, and a run of the explorer
// alone does not claim to have run the built-in features.
func TestSummaryNamesTheExplorersRequestsAndSeed(t *testing.T) {
	rep := Report{
		Settings:  Settings{Profile: "sandbox", Seed: 5, ExplorerOnly: true},
		Scenarios: []ScenarioResult{{Feature: "Exploration", Status: Passed, Explored: &Exploration{Seed: 5, Requests: 440}}},
	}
	var out strings.Builder
	rep.WriteSummary(&out)
	for _, want := range []string{"EXPLORER: 440 requests from seed 5", "--seed 5 sends them again", "features=(none: the explorer alone)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary does not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "(built-in)") {
		t.Errorf("the summary of the explorer alone names the built-in features:\n%s", out.String())
	}
}
