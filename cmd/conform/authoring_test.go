package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// writeFeature writes one feature file into a new directory and returns
// the file's path.
func writeFeature(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "f.feature")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// countingServer answers 404 to everything and counts the requests that
// carry a key, which no authoring error may let through.
func countingServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			n.Add(1)
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	return url, &n
}

// TestAuthoringMistakesAreTheAuthors: each mistake is exit 2 from both
// `conform check` and a run, with the file and line, before any request,
// and each is reported once.
func TestAuthoringMistakesAreTheAuthors(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	tests := []struct {
		name, feature string
		want          []string // each must appear exactly once
	}{
		{"malformed JSON to send", `Feature: F
  Scenario: S
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "Launch",
       "platform": ios}
      """
`, []string{`f.feature:4: the doc string of "I send a POST request to \"/v1/campaigns\" with JSON:" is not JSON`, "(line 2 of the doc string)"}},
		{"malformed JSON to match", `Feature: F
  Scenario: S
    When I send a GET request to "/v1/campaigns"
    Then the JSON at "data" should match:
      """
      {"items": [}
      """
`, []string{"f.feature:5: the doc string of", "is not JSON"}},
		{"a bad outline column, reported once with the columns there are", `Feature: F
  Scenario Outline: S
    When I send a GET request to "<pth>"

    Examples:
      | path          | status |
      | /v1/campaigns | 200    |
      | /v1/bugs      | 200    |
      | /v1/testers   | 200    |
`, []string{"f.feature:3: unknown outline parameter <pth>: the Examples have the columns <path> <status>"}},
		{"a misspelt level tag, which would run held to @must", `Feature: F
  @sandox @writes
  Scenario: S
    When I send a GET request to "/v1/campaigns"
`, []string{"f.feature:2: unknown tag @sandox: did you mean @sandbox?"}},
		{"a sandbox-only step without @sandbox", `Feature: F
  Scenario: S
    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/requests"
`, []string{"f.feature:3: the step `a fresh sandbox account` needs the tag @sandbox", `f.feature:4: "/_sandbox/requests" is a control of the sandbox`}},
		{"a delivery checked before any was waited for", `@sandbox
Feature: F
  Scenario: S
    Given I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with the body '{"name": "A"}'
    Then the delivery should be signed with the webhook's secret
`, []string{"f.feature:6: the step `the delivery should be signed with the webhook's secret` needs a delivery waited for first"}},
		{"two scenarios of one name", `Feature: F
  Scenario: Lists
    When I send a GET request to "/v1/campaigns"

  Scenario: Lists
    When I send a GET request to "/v1/bugs"
`, []string{`f.feature:5: the scenario "Lists" has the name of the one on line 2 of this feature`}},
		{"a step that takes a doc string written without one", `@sandbox
Feature: F
  Scenario: S
    Given I plan the fault:
    When I send a GET request to "/v1/campaigns"
`, []string{"f.feature:4: the step `Given I plan the fault:` takes a doc string, and none is written under it: write one under the step, as in:\n      Given I plan the fault:\n        \"\"\"\n"}},
		{"a doc string under a step that takes none", `Feature: F
  Scenario: S
    When I send a POST request to "/v1/campaigns"
      """
      {"name": "A"}
      """
`, []string{"f.feature:3: the step `When I send a POST request to \"/v1/campaigns\"` takes no doc string", "did you mean:\n      When I send a POST request to \"/v1/campaigns\" with JSON:\n"}},
		{"a table under a step that takes none", `Feature: F
  Scenario: S
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
      | status |
      | 200    |
`, []string{"f.feature:4: the step `Then the response status should be 200` takes no table, and a table is written under it"}},
		{"a doc string written inline", `@sandbox
Feature: F
  Scenario: S
    Given I plan the fault: {"status": 500}
`, []string{"f.feature:4: undefined step: Given I plan the fault: {\"status\": 500}; the step `I plan the fault:` takes its argument as a doc string, on the lines under it:\n      Given I plan the fault:\n        \"\"\"\n        {\"status\": 500}\n        \"\"\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := writeFeature(t, tt.feature)
			for _, got := range []result{
				runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--features", filepath.Dir(f), "--no-builtin", "--format", "none"),
				runCLI(t, nil, "check", "--features", f),
			} {
				if got.code != kit.ExitError {
					t.Errorf("exit %d, want 2\n%s", got.code, got.stderr)
				}
				for _, w := range tt.want {
					if n := strings.Count(got.stderr, w); n != 1 {
						t.Errorf("stderr says %q %d times, want once:\n%s", w, n, got.stderr)
					}
				}
			}
		})
	}
	t.Cleanup(func() {
		if n := requests.Load(); n != 0 {
			t.Errorf("%d authenticated request(s) reached the deployment; want none", n)
		}
	})
}

// TestSuggestionsArePasteable: an undefined step gets up to three
// suggestions, each a whole step with the author's keyword and values and
// no Go escapes, or "no close step".
func TestSuggestionsArePasteable(t *testing.T) {
	t.Parallel()
	f := writeFeature(t, `Feature: F
  Scenario: S
    When I send a GET request to "/v1/campaigns"
    Then the JSON at "data.active" should be true
    And the JSON at "data.items" shuold have 3 items
    And the moon should be made of cheese
`)
	got := runCLI(t, nil, "check", "--features", f)
	if got.code != kit.ExitError {
		t.Fatalf("exit %d, want 2\n%s", got.code, got.stderr)
	}
	for _, want := range []string{
		"\n      Then the JSON at \"data.active\" should equal true\n",
		"\n      And the JSON at \"data.items\" should have 3 items\n",
		"f.feature:6: undefined step: And the moon should be made of cheese; no close step",
	} {
		if !strings.Contains(got.stderr+"\n", want) {
			t.Errorf("stderr lacks %q:\n%s", want, got.stderr)
		}
	}
	if strings.Contains(got.stderr, `\"`) {
		t.Errorf("suggestions are printed with Go escapes:\n%s", got.stderr)
	}
	first := got.stderr[strings.Index(got.stderr, "f.feature:4"):strings.Index(got.stderr, "f.feature:5")]
	if n := strings.Count(first, "\n      Then "); n < 2 || n > 3 {
		t.Errorf("%d suggestions for line 4, want 2 or 3:\n%s", n, first)
	}
}

// TestUnknownTagsAreFlagged: tags are case-sensitive, so "@Webhooks" would
// silently drop the webhook scenarios from an or-expression.
func TestUnknownTagsAreFlagged(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--tags", "@bugs,@Webhooks", "--format", "none")
	if got.code != kit.ExitError || !strings.Contains(got.stderr, "no scenario carries the tag @Webhooks; tags are case-sensitive: did you mean @webhooks?") {
		t.Errorf("exit %d, want 2 and a hint at @webhooks\n%s", got.code, got.stderr)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d authenticated request(s) before the tag was refused", n)
	}
}

// TestOneScenarioByItsLine: file.feature:LINE runs the scenario (or the
// Examples row) starting on that line and nothing else.
func TestOneScenarioByItsLine(t *testing.T) {
	t.Parallel()
	url := serve(t, sandboxtest.NewHandler(t, sandboxtest.Options{}))
	f := writeFeature(t, `Feature: Lines
  Scenario: First
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200

  Scenario: Second
    When I send a GET request to "/v1/nowhere"
    Then the response status should be 200

  Scenario Outline: Rows <path>
    When I send a GET request to "<path>"
    Then the response status should be 200

    Examples:
      | path          |
      | /v1/bugs      |
      | /v1/nowhere   |
`)
	key := map[string]string{keyEnv: testKey}
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"2", []string{"First"}},
		{"10", []string{"Rows /v1/bugs", "Rows /v1/nowhere"}},
		{"16", []string{"Rows /v1/bugs"}},
	} {
		report := filepath.Join(t.TempDir(), "r.xml")
		got := runCLI(t, key, "--base-url", url, "--no-builtin", "--features", f+":"+tt.line, "--format", "none", "--junit", report)
		b, _ := os.ReadFile(report)
		if n := strings.Count(string(b), "<testcase "); n != len(tt.want) {
			t.Errorf("line %s: %d cases ran, want %v\n%s\n%s", tt.line, n, tt.want, got.stderr, b)
		}
		for _, name := range tt.want {
			if !strings.Contains(string(b), "] "+name+`"`) {
				t.Errorf("line %s: %q did not run\n%s", tt.line, name, b)
			}
		}
	}
	got := runCLI(t, key, "--base-url", url, "--no-builtin", "--features", f+":3", "--format", "none")
	if got.code != kit.ExitError || !strings.Contains(got.stderr, "no Scenario, Scenario Outline or Examples row starts on line 3 (scenarios start on lines 2 6 10)") {
		t.Errorf("a line inside a scenario: exit %d\n%s", got.code, got.stderr)
	}
}

// TestCheckSaysWhichRulesAFileCites: --rules names, per file, the rules its
// scenarios cite by tag, which is what a run's coverage counts them for.
func TestCheckSaysWhichRulesAFileCites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"cited.feature": `Feature: C
  @auth @AUTH-3 @AUTH-1
  Scenario: No credentials
    Given I am not authenticated
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 401

  Scenario: Untagged
    When I send a GET request to "/v1/campaigns"
`,
		"plain.feature": `Feature: P
  Scenario: Untagged
    When I send a GET request to "/v1/campaigns"
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := runCLI(t, nil, "check", "--rules", "--features", dir)
	if got.code != kit.ExitConformant {
		t.Fatalf("exit %d, want 0\n%s", got.code, got.stderr)
	}
	for _, want := range []string{
		"cited.feature: 1 of 2 scenario(s) cite 2 rule(s): AUTH-1 AUTH-3\n",
		"plain.feature: 1 scenario(s), none citing a rule by tag",
	} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, got.stdout)
		}
	}
}
