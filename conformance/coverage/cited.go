package coverage

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

var citedID = regexp.MustCompile(`"([A-Z]+-[1-9][0-9]*)"`)

// CitedIn returns the rule IDs that the Go files of dir, tests and the
// given file left out, write as string literals: the rules its checks
// judge. A package's test compares them with what the package declares,
// so that a check cannot cite a rule that `conform rules` does not list.
func CitedIn(dir, except string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == except {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range citedID.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(ids, m[1]) {
				ids = append(ids, m[1])
			}
		}
	}
	order := catalogueOrder()
	slices.SortFunc(ids, func(a, b string) int { return order[a] - order[b] })
	return ids, nil
}

// DeclaredBy returns the IDs declared by one part of the kit, in the order
// of the catalogue.
func DeclaredBy(by string) []string {
	var ids []string
	for _, c := range Checks("") {
		if c.By == by && !slices.Contains(ids, c.Rule) {
			ids = append(ids, c.Rule)
		}
	}
	return ids
}
