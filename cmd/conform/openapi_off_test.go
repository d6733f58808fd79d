//go:build !openapi

package main

import (
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/kit"
)

// TestOpenAPIWithoutTheValidator: the default build leaves the validator
// out; --openapi must say how to build it in, before any request.
func TestOpenAPIWithoutTheValidator(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	got := runCLI(t, map[string]string{keyEnv: testKey}, "--base-url", url, "--openapi", "--format", "none")
	if got.code != kit.ExitError || !strings.Contains(got.stderr, "go build -tags openapi ./cmd/conform") {
		t.Errorf("exit %d, want 2 and how to build the validator in\n%s", got.code, got.stderr)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d request(s) before --openapi was refused", n)
	}
}
