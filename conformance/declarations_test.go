package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/kit"
)

var citedID = regexp.MustCompile(`"([A-Z]+-[1-9][0-9]*)"`)

// TestDeclaredRulesAreTheCitedOnes keeps what `conform rules` says of the
// judging packages true: each declares exactly the rules that its checks
// cite as string literals, in its Go files other than the declaring one,
// so that a check cannot cite a rule `conform rules` does not list, nor a
// rule be listed that no check cites.
func TestDeclaredRulesAreTheCitedOnes(t *testing.T) {
	for _, tc := range []struct {
		dir      string
		declared []kit.Check
	}{
		{"internal/model", model.Checks()},
		{"internal/rules", rules.Checks()},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			var declared []string
			for _, c := range tc.declared {
				declared = append(declared, c.Rule)
			}
			gaps, err := declarationGaps(tc.dir, "checks.go", declared)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range gaps {
				t.Error(g)
			}
		})
	}
}

// declarationGaps compares the rule IDs that the Go files of dir, tests
// and the declaring file left out, write as string literals with what the
// declaring file declares, and says where they differ.
func declarationGaps(dir, declaring string, declared []string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var cited []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == declaring {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range citedID.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(cited, m[1]) {
				cited = append(cited, m[1])
			}
		}
	}
	var gaps []string
	for _, id := range declared {
		if !slices.Contains(cited, id) {
			gaps = append(gaps, fmt.Sprintf("%s declares %s, which no check of the package cites", declaring, id))
		}
	}
	for _, id := range cited {
		if !slices.Contains(declared, id) {
			gaps = append(gaps, fmt.Sprintf("a check cites %s, which %s does not declare", id, declaring))
		}
	}
	return gaps, nil
}
