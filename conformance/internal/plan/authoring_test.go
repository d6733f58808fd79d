package plan

import (
	"strings"
	"testing"
	"testing/fstest"

	messages "github.com/cucumber/messages/go/v21"
)

// lintOne lints one operator's feature file written inline.
func lintOne(t *testing.T, content string) []string {
	t.Helper()
	f, err := readFeature(fstest.MapFS{"my.feature": {Data: []byte(content)}}, "my.feature", "my.feature", (&messages.Incrementing{}).NewId)
	if err != nil {
		t.Fatal(err)
	}
	return lintFiles([]FeatureFile{f})
}

// problem is one a lint should report: where (file:line) and a fragment
// of what it says.
type problem struct{ where, says string }

// wantProblems fails unless every wanted problem is reported, each at its
// file:line, and no other.
func wantProblems(t *testing.T, got []string, want []problem) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, p := range got {
			if strings.HasPrefix(p, w.where+": ") && strings.Contains(p, w.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem at %s saying %q; got:\n%s", w.where, w.says, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

// TestLintTagsThatLookLikeTheKits: a misspelt level, area or rule ID would
// run as a tag of the author's own, the scenario silently held to @must
// under every profile; a tag like nothing the kit reads is the author's.
func TestLintTagsThatLookLikeTheKits(t *testing.T) {
	got := lintOne(t, `@campagins
Feature: tags

  @sandox @Should @AUTH-99 @smoke-test @AUTH-3
  Scenario: tagged
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200

  @sandbox @writes @frozen-clock @CLI-4
  Scenario: known tags
    When I send a GET request to "/v1/campaigns"

  @spec
  Scenario: a profile as a tag
    When I send a GET request to "/v1/campaigns"
`)
	wantProblems(t, got, []problem{
		{"my.feature:1", "did you mean @campaigns?"},
		{"my.feature:4", "unknown tag @sandox: did you mean @sandbox?"},
		{"my.feature:4", "@Should: tags are case-sensitive, did you mean @should?"},
		{"my.feature:4", "@AUTH-99 names no rule of docs/contract.md; did you mean @AUTH-9?"},
		{"my.feature:13", "@spec is no tag of the kit: a profile is chosen with --profile"},
	})
}

// TestLintSandboxOnlyStepsNeedTheTag: a control step or a /_sandbox/ path
// in a scenario without @sandbox fails under --profile spec, at run time;
// check finds it first, wherever the tag is missing.
func TestLintSandboxOnlyStepsNeedTheTag(t *testing.T) {
	got := lintOne(t, `Feature: controls

  Scenario: no tag
    Given a fresh sandbox account
    When I send a GET request to "/_sandbox/requests"
    And I plan the fault:
      """
      {"status": 500}
      """
    And I send a POST request to "/_sandbox/faults" with JSON:
      """
      {"path": "/v1/campaigns/_sandbox/", "status": 500}
      """
    Then the journal should hold 1 "POST" request to "/v1/campaigns"

  @sandbox
  Scenario: tagged, but the clock needs a frozen sandbox
    Given a fresh sandbox account
    When I move the clock forward by "90s"
    And I send a GET request to "/_sandbox/requests"
`)
	wantProblems(t, got, []problem{
		{"my.feature:4", "`a fresh sandbox account` needs the tag @sandbox"},
		{"my.feature:5", `"/_sandbox/requests" is a control of the sandbox`},
		{"my.feature:6", "`I plan the fault:` needs the tag @sandbox"},
		{"my.feature:10", `"/_sandbox/faults" is a control of the sandbox`},
		{"my.feature:14", "needs the tag @sandbox"},
		{"my.feature:19", "needs the tag @frozen-clock"},
	})
}

// TestLintStepsThatNeedAnEarlierOne: a delivery checked before any was
// waited for, and a value read before it is saved, are found before a
// webhook is registered.
func TestLintStepsThatNeedAnEarlierOne(t *testing.T) {
	got := lintOne(t, `@sandbox
Feature: order

  Scenario: checked too early
    Given I register a webhook for "campaign.created"
    When I send a POST request to "/v1/campaigns" with JSON:
      """
      {"name": "A", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}
      """
    Then the delivery should be signed with the webhook's secret
    And the JSON at "data.id" should equal the saved "campaignId"
    And the receiver releases its held answers
    And within 5 seconds the receiver should get a "campaign.created" event
    And the delivery should be signed with the webhook's secret
    And I save the JSON at "data.id" as "campaignId"
    And the JSON at "data.id" should equal the saved "campaignId"
`)
	wantProblems(t, got, []problem{
		{"my.feature:10", "put `Then within 5 seconds the receiver should get a \"campaign.created\" event` before it"},
		{"my.feature:11", `no earlier step of the scenario saves "campaignId"`},
		{"my.feature:12", "needs the receiver holding its answers first"},
	})
}

// TestLintWhatIsWrittenUnderASteps: a doc string missing, one under a step
// that reads none, a table where a doc string goes, and a doc string
// written on the step's line each get their file:line and what to write
// instead, before godog would refuse them in its own words.
func TestLintWhatIsWrittenUnderASteps(t *testing.T) {
	got := lintOne(t, `@sandbox
Feature: arguments

  Scenario: missing
    Given a fresh sandbox account
    And I plan the fault:
    When I send a GET request to "/v1/campaigns"

  Scenario: one too many
    When I send a POST request to "/v1/campaigns"
      """
      {"name": "A"}
      """
    Then the response status should be 200
      | status |
      | 200    |

  Scenario: a table for a doc string
    Given I plan the fault:
      | status |
      | 500    |

  Scenario: inline
    Given I plan the fault: {"status": 500, "count": 1}
    When I send a POST request to "/v1/campaigns" with JSON: '{"name": "A"}'
`)
	wantProblems(t, got, []problem{
		{"my.feature:6", "the step `And I plan the fault:` takes a doc string, and none is written under it: write one under the step, as in:\n      And I plan the fault:\n        \"\"\"\n        {\"method\""},
		{"my.feature:10", "the step `When I send a POST request to \"/v1/campaigns\"` takes no doc string, and a doc string is written under it: remove it, or use a step that takes one; did you mean:\n      When I send a POST request to \"/v1/campaigns\" with JSON:"},
		{"my.feature:14", "takes no table, and a table is written under it: remove it (no step of the library takes a table; an outline's rows go under `Examples:`)"},
		{"my.feature:19", "the step `Given I plan the fault:` takes a doc string, not a table: write one under the step"},
		{"my.feature:24", "undefined step: Given I plan the fault: {\"status\": 500, \"count\": 1}; the step `I plan the fault:` takes its argument as a doc string, on the lines under it:\n      Given I plan the fault:\n        \"\"\"\n        {\"status\": 500, \"count\": 1}\n        \"\"\""},
		{"my.feature:25", "the step `I send a POST request to \"/v1/campaigns\" with JSON:` takes its argument as a doc string, on the lines under it:\n      When I send a POST request to \"/v1/campaigns\" with JSON:\n        \"\"\"\n        {\"name\": \"A\"}\n"},
	})
}

// TestLintScenariosOfOneName: two scenarios of one name in a feature read
// as one in every report; the second is flagged where it is written, rules
// included, and an outline's rows, named alike, are not.
func TestLintScenariosOfOneName(t *testing.T) {
	got := lintOne(t, `Feature: names

  Scenario: Lists
    When I send a GET request to "/v1/campaigns"

  Scenario Outline: Rows
    When I send a GET request to "<path>"

    Examples:
      | path     |
      | /v1/bugs |
      | /v1/bugs |

  Rule: a rule
    Scenario: Lists
      When I send a GET request to "/v1/testers"
`)
	wantProblems(t, got, []problem{
		{"my.feature:15", `the scenario "Lists" has the name of the one on line 3 of this feature`},
	})
}
