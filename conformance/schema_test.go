package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/conformance/openapicheck"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// runWithOpenAPI runs the sandbox profile's tester and rate-limit scenarios,
// those of planned Retry-Afters (FAULT-14, FAULT-15) and those of a POST
// answered by a planned status or malformed answer (FAULT-28), against h
// with the given --openapi source.
func runWithOpenAPI(t *testing.T, h http.Handler, source string) (*kit.Report, string, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	var summary bytes.Buffer
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Profile: kit.ProfileSandbox, Strict: true,
		Tags: "@testers,@ratelimit,@FAULT-14,@FAULT-15,@FAULT-28 && ~@direct", Concurrency: 8, Summary: &summary, Timeout: time.Minute,
		OpenAPI: source, LoadSchema: openapicheck.Load,
	})
	return rep, summary.String(), err
}

func TestOpenAPIPassesTheSandboxAgainstItsOwnDocument(t *testing.T) {
	t.Parallel()
	rep, summary, err := runWithOpenAPI(t, sandboxtest.NewHandler(t, sandboxtest.Options{}), kit.OpenAPIServed)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode() != kit.ExitConformant || len(rep.With(kit.Passed)) == 0 {
		t.Fatalf("exit %d against the sandbox's own document:\n%s", rep.ExitCode(), summary)
	}
}

// The fault plan's delayMs echoed as a string breaks no step of the suite,
// only the document: the schema oracle is what catches it.
func TestOpenAPICatchesWhatNoStepChecks(t *testing.T) {
	t.Parallel()
	broken := breaking(sandboxtest.NewHandler(t, sandboxtest.Options{}), nil, func(r *http.Request, res *response) {
		if r.URL.Path != "/_sandbox/faults" {
			return
		}
		res.envelope(func(m map[string]any) {
			if plan, ok := m["data"].(map[string]any); ok {
				plan["delayMs"] = fmt.Sprint(plan["delayMs"])
			}
		})
	})
	rep, summary, err := runWithOpenAPI(t, broken, "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode() != kit.ExitConformant {
		t.Fatalf("without --openapi the suite already fails, so this is no test of the document:\n%s", summary)
	}
	// The sandbox would serve its own document; a deployment's document
	// comes from a file as often as not.
	doc, err := http.Get(httptest.NewServer(sandboxtest.NewHandler(t, sandboxtest.Options{})).URL + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(doc.Body); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "openapi.yaml")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, summary, err = runWithOpenAPI(t, broken, file)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode() != kit.ExitDeviations {
		t.Fatalf("exit %d with --openapi, want deviations:\n%s", rep.ExitCode(), summary)
	}
	var schema []kit.ScenarioResult
	for _, s := range rep.With(kit.Failed) {
		if s.Area == "schema" {
			schema = append(schema, s)
		}
	}
	if len(schema) == 0 || !strings.Contains(schema[0].Message, "delayMs") || !strings.Contains(schema[0].Message, "the document wants") {
		t.Errorf("no schema failure names delayMs and what the document wants:\n%s", summary)
	}
}

func TestOpenAPIRefusesABrokenDocumentBeforeAnyScenario(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(file, []byte("openapi: 3.1.0\ninfo: {title: x}\npaths:\n  /x:\n    get:\n      responses: 200\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, source := range []string{file, filepath.Join(t.TempDir(), "missing.yaml")} {
		_, _, err := runWithOpenAPI(t, sandboxtest.NewHandler(t, sandboxtest.Options{}), source)
		if !errors.Is(err, kit.ErrUsage) {
			t.Errorf("--openapi %s: %v, want a usage error", filepath.Base(source), err)
		}
	}
}
