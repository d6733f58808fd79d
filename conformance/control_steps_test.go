package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestControlStepsFailWhenWhatTheyCheckIsFalse: docs/testdata runs each
// control step where it holds; here each one meets a sandbox where it does
// not, and fails the scenario saying what it found.
func TestControlStepsFailWhenWhatTheyCheckIsFalse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	feature := `@sandbox @writes
Feature: Control steps that do not hold

  Scenario: The journal holds fewer requests than said
    Given a fresh sandbox account
    When I send a POST request to "/v1/campaigns" with the body '{"name": "One", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then the journal should hold 2 "POST" requests to "/v1/campaigns"

  Scenario: A fault the sandbox refuses
    Given a fresh sandbox account
    And I plan the fault:
      """
      {"stauts": 500}
      """

  Scenario: Deliveries still in flight
    Given a fresh sandbox account
    And I register a webhook for "campaign.created"
    And the receiver holds its answers until released
    When I send a POST request to "/v1/campaigns" with the body '{"name": "Held", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'
    Then within 5 seconds the receiver should get a "campaign.created" event
    And the sandbox's deliveries should settle within 1 second

  Scenario: A list that holds what it should not
    Given a fresh sandbox account
    When I send a GET request to "/v1/bugs"
    Then the JSON at "data.items" should not contain:
      """
      {"status": "new"}
      """

  Scenario: Text that holds what it should not
    Given a fresh sandbox account
    When I send a GET request to "/v1/campaigns/cmp_000001"
    Then the JSON at "data.id" should not contain "cmp_"
`
	if err := os.WriteFile(filepath.Join(dir, "controls.feature"), []byte(feature), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: "svc_test_control_steps_fail", Profile: kit.ProfileSandbox,
		NoBuiltin: true, FeatureDirs: []string{dir}, Explore: -1, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := map[string]string{
		"The journal holds fewer requests than said": `the journal holds 1 POST requests to "/v1/campaigns", want 2`,
		"A fault the sandbox refuses":                "POST /_sandbox/faults answered 400, want 200",
		"Deliveries still in flight":                 `did not settle within 1s: {"due":0,"held":0,"inFlight":1`,
		"A list that holds what it should not":       "matches what should not be there",
		"Text that holds what it should not":         `the JSON at "data.id" contains "cmp_"`,
	}
	if len(rep.Scenarios) != len(want) {
		t.Fatalf("%d scenarios, want %d", len(rep.Scenarios), len(want))
	}
	for _, s := range rep.Scenarios {
		if s.Status != kit.Failed || !strings.Contains(s.Message, want[s.Name]) {
			t.Errorf("%s: %s %q, want failed saying %q", s.Name, s.Status, s.Message, want[s.Name])
		}
	}
}
