package model

import (
	"slices"
	"testing"

	"github.com/testcampaign/kit/conformance/coverage"
)

// TestDeclaredRulesAreTheCitedOnes keeps what `conform rules` says of this
// package true: it declares exactly the rules its checks cite.
func TestDeclaredRulesAreTheCitedOnes(t *testing.T) {
	cited, err := coverage.CitedIn(".", "checks.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := append([]string(nil), checked...)
	for _, id := range declared {
		if !slices.Contains(cited, id) {
			t.Errorf("checks.go declares %s, which no check of the package cites", id)
		}
	}
	for _, id := range cited {
		if !slices.Contains(declared, id) {
			t.Errorf("a check cites %s, which checks.go does not declare", id)
		}
	}
}
