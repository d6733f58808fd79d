package steps

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

func TestStatusOfRanksTheKitsOwnTroubleAsAnError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want kit.Status
	}{
		{nil, kit.Passed},
		{errors.New(`the header "Allow" is missing`), kit.Failed},
		{fmt.Errorf("step: %w", godog.ErrSkip), kit.Skipped},
		{fmt.Errorf("%w: I sned a request", godog.ErrUndefined), kit.Errored},
		{fmt.Errorf("%w: bad placeholder", kit.ErrUsage), kit.Errored},
		{fmt.Errorf("%w: GET /v1: refused", kit.ErrConnection), kit.Errored},
		{&transport.ThrottledError{Scope: transport.ScopeKey, Request: "GET /v1/bugs"}, kit.Errored},
	} {
		if got := statusOf(tt.err); got != tt.want {
			t.Errorf("statusOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

// TestTheLibraryHandsTheRunEachScenarioItsResult: the library's own hooks
// place each step where the run says it is written, judge the exchanges
// its steps sent, and hand the run one result per scenario: a pass with
// its steps, and a failure of a step whose own check held but whose
// answer broke a rule of every response, named with its line, the rule
// and the exchange.
func TestTheLibraryHandsTheRunEachScenarioItsResult(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/bad" {
			fmt.Fprint(w, `{"data":{}}`)
			return
		}
		fmt.Fprint(w, `{"success":true,"data":{}}`)
	}))
	defer srv.Close()
	feature := `Feature: Results
  Scenario: Holds
    When I send a GET request to "/v1/ok"
    Then the response status should be 200

  Scenario: Breaks a rule
    When I send a GET request to "/v1/bad"
    Then the response status should be 200
`
	lines := map[string][]int{"Holds": {3, 4}, "Breaks a rule": {7, 8}}
	var (
		mu      sync.Mutex
		results = map[string]*kit.ScenarioResult{}
	)
	run := Run{
		Target: &transport.Target{BaseURL: srv.URL, Key: "svc_test_lifecycle", Profile: kit.ProfileSpec,
			Redact: wire.Redactor("svc_test_lifecycle"), Client: srv.Client()},
		Places: func(p *godog.Scenario) map[string]Place {
			at := map[string]Place{}
			for i, st := range p.Steps {
				at[st.Id] = Place{URI: p.Uri, Line: lines[p.Name][i]}
			}
			return at
		},
		Ended: func(p *godog.Scenario, res *kit.ScenarioResult) {
			mu.Lock()
			defer mu.Unlock()
			results[p.Name] = res
		},
	}
	suite := godog.TestSuite{
		ScenarioInitializer: NewLibrary().Initializer(run),
		Options: &godog.Options{Format: "progress", Output: io.Discard, Strict: true,
			FeatureContents: []godog.Feature{{Name: "results.feature", Contents: []byte(feature)}}},
	}
	if code := suite.Run(); code != 1 {
		t.Fatalf("godog exit %d, want 1 for the scenario that broke a rule", code)
	}
	held := results["Holds"]
	if held == nil || held.Status != kit.Passed || len(held.Steps) != 2 || held.Steps[0].Line != 3 || held.Steps[1].Line != 4 {
		t.Errorf("the scenario that holds got %+v, want passed with its two steps at lines 3 and 4", held)
	}
	broke := results["Breaks a rule"]
	switch {
	case broke == nil:
		t.Fatal("no result for the scenario that broke a rule")
	case broke.Status != kit.Failed || broke.Rule == "" || broke.RuleLevel != docs.Must:
		t.Errorf("the scenario that broke a rule got status %s, rule %q at %q; want failed by a must rule", broke.Status, broke.Rule, broke.RuleLevel)
	case broke.FailedLine != 7 || !strings.Contains(broke.Request, "/v1/bad") || !strings.Contains(broke.Response, `{"data":{}}`):
		t.Errorf("the failure is placed at line %d with the exchange %q → %q; want line 7 and the answer to GET /v1/bad", broke.FailedLine, broke.Request, broke.Response)
	case len(broke.Steps) == 0 || broke.Steps[0].Status != "failed" || broke.Steps[0].Line != 7:
		t.Errorf("the steps ran %+v; want the sending step, at line 7, failed", broke.Steps)
	}
}
