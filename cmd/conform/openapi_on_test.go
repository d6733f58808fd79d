//go:build openapi

package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestOpenAPIBuild runs --openapi in a build that has the validator
// (go test -tags openapi ./cmd/conform).
func TestOpenAPIBuild(t *testing.T) {
	t.Parallel()
	sandbox := serve(t, sandboxtest.NewHandler(t, sandboxtest.Options{}))
	noDocument := serve(t, rewriting(sandboxtest.NewHandler(t, sandboxtest.Options{}),
		func(r *http.Request, st int, _ http.Header, b []byte) (int, []byte) {
			if r.URL.Path == "/openapi.json" {
				return http.StatusNotFound, []byte(`{"success":false,"error":{"code":"NOT_FOUND","message":"no route","status":404}}`)
			}
			return st, b
		}))
	withKey := map[string]string{keyEnv: testKey}
	for _, tt := range []struct {
		name   string
		args   []string
		want   int
		stderr string
	}{
		{"the sandbox against its own document", []string{"--base-url", sandbox, "--profile", "sandbox", "--tags", "@campaigns", "--openapi"}, 0, "RESULT: CONFORMANT"},
		{"a document that does not exist", []string{"--base-url", sandbox, "--openapi=" + filepath.Join(t.TempDir(), "none.yaml")}, 2, "--openapi"},
		{"a deployment that serves no document", []string{"--base-url", noDocument, "--openapi"}, 2, "openapi.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runCLI(t, withKey, append(tt.args, "--format", "none")...)
			if got.code != tt.want || !strings.Contains(got.stderr, tt.stderr) {
				t.Errorf("exit %d, want %d and %q\n%s", got.code, tt.want, tt.stderr, got.stderr)
			}
		})
	}
}
