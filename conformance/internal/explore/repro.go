package explore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/model"
)

// gherkin prints a finding as a scenario of the kit's own steps. It needs no
// step of its own to fail: the model judges every exchange of a scenario, so
// replaying the requests is enough.
func (x *explorer) gherkin(f *finding) string {
	var b strings.Builder
	keys := 0
	for _, s := range f.steps {
		keys = max(keys, s.key+1)
	}
	fmt.Fprintf(&b, "Feature: Found by conform's explorer (seed %d)\n\n", x.seed)
	fmt.Fprintf(&b, "  @sandbox @writes @%s\n", model.RuleModel)
	fmt.Fprintf(&b, "  Scenario: %s\n", strings.ReplaceAll(f.violation.Rule, "\n", " "))
	for k := 0; k < keys; k++ {
		b.WriteString("    Given a fresh sandbox account\n")
		if keys > 1 {
			fmt.Fprintf(&b, "    And I save \"{key}\" as \"key%d\"\n", k)
		}
	}
	current := keys - 1
	for _, s := range f.steps {
		if keys > 1 && s.key != current {
			fmt.Fprintf(&b, "    When I use the API key \"{key%d}\"\n", s.key)
			current = s.key
		}
		n := max(s.burst, 1)
		for i := 0; i < n; i++ {
			b.WriteString(stepLine(s))
		}
		if s.saveAs != "" {
			fmt.Fprintf(&b, "    And I save the JSON at \"%s\" as \"%s\"\n", s.saveAt, s.saveAs)
		}
	}
	return b.String()
}

func stepLine(s xstep) string {
	if s.body == "" && s.contentType == "" {
		return fmt.Sprintf("    When I send a %s request to \"%s\"\n", s.method, s.path)
	}
	doc := "      \"\"\"\n      " + strings.ReplaceAll(s.body, "\n", "\n      ") + "\n      \"\"\"\n"
	return fmt.Sprintf("    When I send a %s request to \"%s\" with a \"%s\" body:\n%s", s.method, s.path, s.contentType, doc)
}

// writeRepro writes a scenario where --repro-dir asks, one file per seed.
func writeRepro(dir string, seed uint64, scenario string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("explorer-seed-%d.feature", seed))
	return path, os.WriteFile(path, []byte(scenario), 0o644)
}
