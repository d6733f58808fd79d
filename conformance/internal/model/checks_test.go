package model

import (
	"testing"

	"github.com/testcampaign/kit/conformance/internal/coverage"
)

// TestDeclaredRulesAreTheCitedOnes keeps what `conform rules` says of this
// package true: it declares exactly the rules its checks cite.
func TestDeclaredRulesAreTheCitedOnes(t *testing.T) {
	gaps, err := coverage.DeclarationGaps(".", "checks.go", checked)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gaps {
		t.Error(g)
	}
}
