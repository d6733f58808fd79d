package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestVerdictDoesNotDependOnTheSeed runs a default run, scenarios and the
// bounded exploration, with five seeds against each broken deployment: a
// deviation the run catches with one seed it catches with every seed, and
// the summary names the seed that repeats the run.
func TestVerdictDoesNotDependOnTheSeed(t *testing.T) {
	t.Parallel()
	variants := []struct {
		name  string
		tags  string // narrows the scenarios to where the breakage shows
		after func(*http.Request, *response)
	}{
		{"data is an array", "@envelope", func(_ *http.Request, r *response) {
			r.envelope(func(m map[string]any) {
				if d, ok := m["data"]; ok {
					m["data"] = []any{d}
				}
			})
		}},
		{"a list ignores limit", "@campaigns", func(req *http.Request, r *response) {
			if req.URL.Query().Get("limit") == "1" {
				r.data(func(d map[string]any) {
					if items, ok := d["items"].([]any); ok && len(items) == 1 {
						d["items"] = append(items, items[0])
					}
				})
			}
		}},
	}
	seeds := []uint64{1, 2, 3, 4, 5}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(breaking(sandboxtest.NewHandler(t, sandboxtest.Options{}), nil, v.after))
			t.Cleanup(srv.Close)
			for _, seed := range seeds {
				var summary bytes.Buffer
				rep, err := conformance.Run(context.Background(), kit.Config{
					BaseURL: srv.URL, APIKey: suiteKey, Profile: kit.ProfileSandbox,
					Tags: v.tags, Seed: seed, Concurrency: 8, Summary: &summary, Timeout: time.Minute,
				})
				if err != nil {
					t.Fatalf("seed %d: Run: %v", seed, err)
				}
				if got := rep.ExitCode(); got != kit.ExitDeviations {
					t.Errorf("seed %d: exit code %d, want %d (deviations)\n%s", seed, got, kit.ExitDeviations, summary.String())
				}
				if want := fmt.Sprintf("seed=%d", seed); !strings.Contains(summary.String(), want) {
					t.Errorf("seed %d: the summary does not print %s:\n%s", seed, want, summary.String())
				}
			}
		})
	}
}
