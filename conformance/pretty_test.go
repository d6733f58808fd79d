package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestPrettyPlacesEveryStepInItsFeature: godog's pretty output ends each
// step with where it is defined, which for the kit is one Go method for
// every step; conform puts the step's own file and line there, through a
// background, an outline and a step written twice, with scenarios run one
// at a time or at once.
func TestPrettyPlacesEveryStepInItsFeature(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	feature := `@sandbox
Feature: Placed
  Background:
    Given a fresh sandbox account

  Scenario: The same step twice
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200
    When I send a GET request to "/v1/campaigns"
    Then the response status should be 200

  Scenario Outline: An outline
    When I send a GET request to "<path>"
    Then the response status should be 200

    Examples:
      | path        |
      | /v1/testers |
      | /v1/bugs    |
`
	path := filepath.Join(dir, "placed.feature")
	if err := os.WriteFile(path, []byte(feature), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	placed := regexp.MustCompile(`^\s+(Given|When|Then|And) (.*?)\s+# (\S+):([0-9]+)$`)
	lines := strings.Split(feature, "\n")
	// The background, the first scenario's four steps, and the outline's
	// two after the background's, which pretty prints again in an
	// outline, are placed, whether scenarios run one at a time or at once.
	for _, concurrency := range []int{1, 2} {
		const want = 8
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			var out bytes.Buffer
			_, err := conformance.Run(context.Background(), kit.Config{
				BaseURL: srv.URL, APIKey: "svc_test_pretty_placed", Profile: kit.ProfileSandbox,
				NoBuiltin: true, FeatureDirs: []string{dir}, Format: kit.FormatPretty, Output: &out,
				Concurrency: concurrency, Explore: -1, Timeout: time.Minute,
			})
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			if strings.Contains(out.String(), ".go:") {
				t.Errorf("pretty still names a Go file:\n%s", out.String())
			}
			steps := 0
			for _, line := range strings.Split(out.String(), "\n") {
				m := placed.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				steps++
				var n int
				if _, err := fmt.Sscan(m[4], &n); err != nil || m[3] != path || n < 1 || n > len(lines) {
					t.Errorf("the step %q is placed at %s:%s, not in %s", m[2], m[3], m[4], path)
					continue
				}
				if written := strings.TrimSpace(lines[n-1]); written != m[1]+" "+m[2] {
					t.Errorf("the step %q is placed at line %d, which holds %q", m[1]+" "+m[2], n, written)
				}
			}
			if steps != want {
				t.Errorf("%d steps placed, want %d:\n%s", steps, want, out.String())
			}
		})
	}
}

// TestPrettyPlacesStepsOfAnotherLanguage: a feature written in French has
// keywords of several words, and its steps, its background's among them,
// are placed as English ones are.
func TestPrettyPlacesStepsOfAnotherLanguage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	feature := `# language: fr
@sandbox
Fonctionnalité: Placée en français
  Contexte:
    Etant donné que a fresh sandbox account

  Scénario: Des mots-clés de plusieurs mots
    Quand I send a GET request to "/v1/campaigns"
    Alors the response status should be 200
    Et que the response status should be 200
`
	path := filepath.Join(dir, "fr.feature")
	if err := os.WriteFile(path, []byte(feature), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	var out bytes.Buffer
	if _, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: "svc_test_pretty_placed_fr", Profile: kit.ProfileSandbox,
		NoBuiltin: true, FeatureDirs: []string{dir}, Format: kit.FormatPretty, Output: &out,
		Concurrency: 1, Explore: -1, Timeout: time.Minute,
	}); err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	lines := strings.Split(feature, "\n")
	for _, n := range []int{5, 8, 9, 10} {
		want := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(strings.TrimSpace(lines[n-1])) + `\s+# ` + regexp.QuoteMeta(path) + `:` + fmt.Sprint(n) + `$`)
		if !want.MatchString(out.String()) {
			t.Errorf("the step of line %d (%q) is not placed there:\n%s", n, strings.TrimSpace(lines[n-1]), out.String())
		}
	}
}
