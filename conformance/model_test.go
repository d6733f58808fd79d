package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// explore runs the bounded exploration of a default run against h.
func explore(t *testing.T, h http.Handler, seed uint64, reproDir string) *conformance.Report {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rep, err := conformance.Explore(context.Background(), conformance.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Profile: conformance.ProfileSandbox,
		Seed: seed, ReproDir: reproDir, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Explore: %v", err)
	}
	return rep
}

// TestModelCatchesUnlistedBreakages breaks one documented rule at a time,
// of kinds no scenario names, and wants the explorer's model to fail it.
func TestModelCatchesUnlistedBreakages(t *testing.T) {
	t.Parallel()
	var postsPerKey sync.Map
	tests := []struct {
		name   string
		opts   sandboxtest.Options
		before func(*http.Request)
		after  func(*http.Request, *response)
	}{
		{
			name: "a read returns rewardPerBug in another form than written",
			after: func(req *http.Request, r *response) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/campaigns/") {
					r.body = bytes.ReplaceAll(r.body, []byte(`.50,`), []byte(`.5,`))
					r.body = bytes.ReplaceAll(r.body, []byte(`.99,`), []byte(`.990,`))
				}
			},
		},
		{
			name: "names are stored trimmed",
			before: func(r *http.Request) {
				if r.Method == http.MethodPost && r.URL.Path == "/v1/campaigns" {
					rewriteBody(r, func(m map[string]any) {
						if s, ok := m["name"].(string); ok {
							m["name"] = strings.TrimSpace(s)
						}
					})
				}
			},
		},
		{
			name: "every POST counts twice, visible only across requests",
			after: func(req *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Remaining") == "" || !strings.HasPrefix(req.URL.Path, "/v1") {
					return
				}
				n, _ := postsPerKey.LoadOrStore(bearer(req), new(int64))
				p := n.(*int64)
				if req.Method == http.MethodPost {
					*p++
				}
				r.header.Set("X-RateLimit-Remaining", strconv.Itoa(max(intHeader(r.header, "X-RateLimit-Remaining")-int(*p), 0)))
			},
		},
		{
			name: "analytics count in_progress bugs as confirmed",
			after: func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/analytics" {
					r.data(func(d map[string]any) {
						if b, ok := d["bugs"].(map[string]any); ok {
							if s, ok := b["byStatus"].(map[string]any); ok {
								ip, _ := strconv.Atoi(string(s["in_progress"].(json.Number)))
								c, _ := strconv.Atoi(string(s["confirmed"].(json.Number)))
								s["confirmed"], s["in_progress"] = json.Number(strconv.Itoa(c+ip)), json.Number("0")
							}
						}
					})
				}
			},
		},
		{
			name: "the request log leaves out refused requests",
			after: func(req *http.Request, r *response) {
				if req.URL.Path == "/_sandbox/requests" {
					r.data(func(d map[string]any) {
						items, _ := d["items"].([]any)
						var kept []any
						for _, it := range items {
							if st, _ := it.(map[string]any)["status"].(json.Number); statusBelow(st, 400) {
								kept = append(kept, it)
							}
						}
						d["items"] = append([]any{}, kept...)
					})
				}
			},
		},
		{
			name: "a filed bug's event is not recorded",
			after: func(req *http.Request, r *response) {
				if req.URL.Path == "/_sandbox/events" {
					r.data(func(d map[string]any) {
						items, _ := d["items"].([]any)
						var kept []any
						for _, it := range items {
							if it.(map[string]any)["type"] != "bug.created" {
								kept = append(kept, it)
							}
						}
						d["items"] = append([]any{}, kept...)
					})
				}
			},
		},
		{
			name: "records stamped with the real clock, not the account's frozen one",
			opts: sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
			after: func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					r.data(func(d map[string]any) { d["createdAt"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z") })
				}
			},
		},
		{
			name: "a refused transition answers 400 instead of 409",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusConflict {
					r.status = http.StatusBadRequest
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("400") })
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := explore(t, breaking(sandboxtest.NewHandler(t, tt.opts), tt.before, tt.after), 1, "")
			if rep.ExitCode() != conformance.ExitDeviations {
				t.Fatalf("the explorer found nothing; want a deviation")
			}
		})
	}
}

// TestShrunkScenarioRoundTrip: what the explorer finds, written with
// --repro-dir, fails against the broken deployment and passes against the
// sandbox.
func TestShrunkScenarioRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := breaking(sandboxtest.NewHandler(t, sandboxtest.Options{}), nil, func(req *http.Request, r *response) {
		if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/campaigns/") {
			r.data(func(d map[string]any) { d["testersRequired"] = json.Number("3") })
		}
	})
	if rep := explore(t, broken, 5, dir); rep.ExitCode() != conformance.ExitDeviations {
		t.Fatal("the explorer found nothing")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.feature"))
	if len(files) != 1 {
		t.Fatalf("want one scenario written, got %v", files)
	}
	text, _ := os.ReadFile(files[0])
	for _, tc := range []struct {
		name string
		h    http.Handler
		want int
	}{
		{"broken", broken, conformance.ExitDeviations},
		{"sandbox", sandboxtest.NewHandler(t, sandboxtest.Options{}), conformance.ExitConformant},
	} {
		srv := httptest.NewServer(tc.h)
		rep, err := conformance.Run(context.Background(), conformance.Config{
			BaseURL: srv.URL, APIKey: suiteKey, Profile: conformance.ProfileSandbox,
			FeatureDirs: []string{dir}, NoBuiltin: true, Explore: -1, Strict: true, Timeout: time.Minute,
		})
		srv.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := rep.ExitCode(); got != tc.want {
			t.Errorf("%s: the shrunk scenario exits %d, want %d\n%s", tc.name, got, tc.want, text)
		}
	}
}

// TestModelPassesTheSandboxOnceFailedSeeds replays explorations that once
// failed a correct sandbox through a fault of the model's own.
func TestModelPassesTheSandboxOnceFailedSeeds(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{
		// An injected 500 answering HEAD, whose answer has no body to
		// carry INTERNAL_ERROR.
		9247939219748582277,
	} {
		if rep := explore(t, sandboxtest.NewHandler(t, sandboxtest.Options{}), seed, ""); rep.ExitCode() != conformance.ExitConformant {
			t.Errorf("seed %d: exit %d against a correct sandbox, want %d", seed, rep.ExitCode(), conformance.ExitConformant)
		}
	}
}

// statusBelow says whether a journal entry's status is below limit; an
// entry without one (a dropped connection's) is.
func statusBelow(status json.Number, limit int64) bool {
	n, err := status.Int64()
	return err != nil || n < limit
}
