package runner

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cucumber/godog"
)

// TestPrettyPlacesEachStepAtItsLine: the kit's pretty formatter ends each
// step's line with the file and line where the step is written, read from
// godog's own Gherkin documents: through a background printed once, a step
// written twice, an outline printed as written, keywords of several words,
// and scenarios run at once.
func TestPrettyPlacesEachStepAtItsLine(t *testing.T) {
	features := []godog.Feature{
		{Name: "placed.feature", Contents: []byte(`Feature: Placed
  Background:
    Given a step

  Scenario: The same step twice
    When a step
    Then another step
    When a step
    Then another step

  Scenario Outline: An outline
    When a step with "<value>"
    Then another step

    Examples:
      | value |
      | one   |
      | two   |
`)},
		{Name: "fr.feature", Contents: []byte(`# language: fr
Fonctionnalité: Placée en français
  Contexte:
    Etant donné que a step

  Scénario: Des mots-clés de plusieurs mots
    Quand a step
    Et que another step
`)},
	}
	placed := regexp.MustCompile(`^\s+(\S.*?)\s+# (\S+\.feature):([0-9]+)$`)
	for _, concurrency := range []int{1, 3} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			var out bytes.Buffer
			suite := godog.TestSuite{
				ScenarioInitializer: func(sc *godog.ScenarioContext) {
					sc.Step(`^a step$`, func() error { return nil })
					sc.Step(`^another step$`, func() error { return nil })
					sc.Step(`^a step with "([^"]*)"$`, func(string) error { return nil })
				},
				Options: &godog.Options{Format: placingPretty, Output: &out, NoColors: true, Strict: true,
					FeatureContents: features, Concurrency: concurrency},
			}
			if code := suite.Run(); code != 0 {
				t.Fatalf("exit %d:\n%s", code, out.String())
			}
			if strings.Contains(out.String(), ".go:") {
				t.Errorf("pretty still names a Go file:\n%s", out.String())
			}
			written := map[string][]string{}
			for _, f := range features {
				written[f.Name] = strings.Split(string(f.Contents), "\n")
			}
			steps := 0
			for _, line := range strings.Split(out.String(), "\n") {
				m := placed.FindStringSubmatch(line)
				if m == nil || strings.Contains(m[1], ":") {
					continue
				}
				steps++
				var n int
				lines := written[m[2]]
				if _, err := fmt.Sscan(m[3], &n); err != nil || n < 1 || n > len(lines) {
					t.Errorf("the step %q is placed at %s:%s, which is no line of its feature", m[1], m[2], m[3])
					continue
				}
				if at := strings.TrimSpace(lines[n-1]); at != m[1] {
					t.Errorf("the step %q is placed at %s:%d, which holds %q", m[1], m[2], n, at)
				}
			}
			// In placed.feature the background, the first scenario's four
			// steps, and the outline's two after the background's, which
			// pretty prints again in an outline; three in fr.feature.
			if steps != 11 {
				t.Errorf("%d steps placed, want 11:\n%s", steps, out.String())
			}
		})
	}
}
