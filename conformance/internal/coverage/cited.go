package coverage

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

var citedID = regexp.MustCompile(`"([A-Z]+-[1-9][0-9]*)"`)

// DeclarationGaps compares the rule IDs that the Go files of dir, tests
// and the declaring file left out, write as string literals (the rules its
// checks judge) with what the declaring file declares, and says where they
// differ. A package's test fails on each, so that a check cannot cite a
// rule that `conform rules` does not list, nor a rule be listed that no
// check cites.
func DeclarationGaps(dir, declaring string, declared []string) ([]string, error) {
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
