package conformance_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// explore runs the bounded exploration of a default run against h.
func explore(t *testing.T, h http.Handler, seed uint64, reproDir string) *kit.Report {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rep, err := conformance.Explore(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Profile: kit.ProfileSandbox,
		Seed: seed, ReproDir: reproDir, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Explore: %v", err)
	}
	return rep
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
	if rep := explore(t, broken, 5, dir); rep.ExitCode() != kit.ExitDeviations {
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
		{"broken", broken, kit.ExitDeviations},
		{"sandbox", sandboxtest.NewHandler(t, sandboxtest.Options{}), kit.ExitConformant},
	} {
		srv := httptest.NewServer(tc.h)
		rep, err := conformance.Run(context.Background(), kit.Config{
			BaseURL: srv.URL, APIKey: suiteKey, Profile: kit.ProfileSandbox,
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
		if rep := explore(t, sandboxtest.NewHandler(t, sandboxtest.Options{}), seed, ""); rep.ExitCode() != kit.ExitConformant {
			t.Errorf("seed %d: exit %d against a correct sandbox, want %d", seed, rep.ExitCode(), kit.ExitConformant)
		}
	}
}

// TestModelDisagreementInAScenarioIsReproduced: a default run whose
// scenarios fail on a rule the model judges, with no exploration to meet
// the failure, writes a reproduction built from a failed scenario's
// requests with --repro-dir, which fails against the broken deployment
// and passes against the sandbox.
func TestModelDisagreementInAScenarioIsReproduced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := resolvingOnConflict(sandboxtest.NewHandler(t, sandboxtest.Options{}))
	srv := httptest.NewServer(broken)
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Profile: kit.ProfileSandbox,
		Explore: -1, ReproDir: dir, Timeout: time.Minute,
	})
	srv.Close()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.ExitCode() != kit.ExitDeviations {
		t.Fatalf("exit %d against a deployment whose 409s set a resolution, want %d", rep.ExitCode(), kit.ExitDeviations)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "model-*.feature"))
	if len(files) == 0 {
		t.Fatal("no reproduction written to the --repro-dir")
	}
	told := false
	for _, s := range rep.With(kit.Failed) {
		told = told || strings.Contains(s.Message, "written to "+filepath.Join(dir, "model-"))
	}
	if !told {
		t.Error("no failed scenario says where its reproduction is")
	}
	for _, file := range files {
		text, _ := os.ReadFile(file)
		alone := t.TempDir()
		if err := os.WriteFile(filepath.Join(alone, filepath.Base(file)), text, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			h    http.Handler
			want int
		}{
			{"broken", resolvingOnConflict(sandboxtest.NewHandler(t, sandboxtest.Options{})), kit.ExitDeviations},
			{"sandbox", sandboxtest.NewHandler(t, sandboxtest.Options{}), kit.ExitConformant},
		} {
			srv := httptest.NewServer(tc.h)
			rep, err := conformance.Run(context.Background(), kit.Config{
				BaseURL: srv.URL, APIKey: suiteKey, Profile: kit.ProfileSandbox,
				FeatureDirs: []string{alone}, NoBuiltin: true, Explore: -1, Strict: true, Timeout: time.Minute,
			})
			srv.Close()
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got := rep.ExitCode(); got != tc.want {
				t.Errorf("%s: the reproduction %s exits %d, want %d\n%s", tc.name, filepath.Base(file), got, tc.want, text)
			}
		}
	}
}

// resolvingOnConflict is a deployment whose 409 to a bug change still sets
// the resolution it was sent: every later read of the bug shows it, until
// a change is taken.
func resolvingOnConflict(next http.Handler) http.Handler {
	var mu sync.Mutex
	set := map[string]any{}
	return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
		id, ok := strings.CutPrefix(req.URL.Path, "/v1/bugs/")
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ok && req.Method == http.MethodPatch && r.status == http.StatusConflict:
			var change map[string]any
			if json.Unmarshal(body, &change) == nil && change["resolution"] != nil {
				set[bearer(req)+" "+id] = change["resolution"]
			}
		case ok && req.Method == http.MethodPatch && r.status == http.StatusOK:
			delete(set, bearer(req)+" "+id)
		case ok && req.Method == http.MethodGet:
			r.data(func(d map[string]any) {
				if res, found := set[bearer(req)+" "+id]; found {
					d["resolution"] = res
				}
			})
		case isGet(req, "/v1/bugs"):
			r.eachItem(func(it map[string]any) {
				if res, found := set[bearer(req)+" "+toString(it["id"])]; found {
					it["resolution"] = res
				}
			})
		}
	})
}
