package coverage

import (
	_ "embed"
	"strings"
	"sync"
)

// proofIndex lists, one "RULE-ID<TAB>name" line each, the broken sandboxes
// of the kit's tests (conformance/proofs_test.go) that break one rule
// alone and fail the whole default run with three seeds. A test there
// keeps this file equal to its table and writes it with -update-proofs.
//
//go:embed proofs.txt
var proofIndex string

var proofsByRule = sync.OnceValue(func() map[string][]string {
	byRule := map[string][]string{}
	for line := range strings.Lines(proofIndex) {
		id, name, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if ok {
			byRule[id] = append(byRule[id], name)
		}
	}
	return byRule
})

// Proofs names the broken sandboxes that prove the kit's check of the
// rule: each breaks that rule alone, and the default run fails on it
// whatever its seed. A rule the kit checks without a proof is a claim the
// kit's tests do not back.
func Proofs(id string) []string {
	return proofsByRule()[id]
}

// ProofIndex is the text of the index, for the test that keeps it true.
func ProofIndex() string { return proofIndex }
