package conformance_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// sideRequest sends a request of a broken deployment's own making to the
// sandbox behind it, as key.
func sideRequest(next http.Handler, key, method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	return rec
}

const ghostCampaign = `{"name":"ghost","platform":"web","testersRequired":3,"rewardPerBug":5}`

// TestDefaultRunCatchesSideEffects breaks one documented rule at a time
// whose effect no single answer shows: a write that should not have
// happened, a reset that keeps something, a record one key lends another.
// The default run, with its bounded exploration, must fail each.
func TestDefaultRunCatchesSideEffects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wrap func(next http.Handler) http.Handler
	}{
		{
			name: "a refused campaign is stored all the same",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" && (r.status == http.StatusBadRequest || r.status == http.StatusUnprocessableEntity || r.status == http.StatusUnsupportedMediaType) {
						sideRequest(next, bearer(req), http.MethodPost, "/v1/campaigns", ghostCampaign)
					}
				})
			},
		},
		{
			name: "a reset keeps a campaign",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/reset" && r.status == http.StatusOK {
						sideRequest(next, bearer(req), http.MethodPost, "/v1/campaigns", ghostCampaign)
					}
				})
			},
		},
		{
			name: "a key reads another key's campaign",
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				keys := map[string]bool{}
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					key := bearer(req)
					mu.Lock()
					keys[key] = true
					var others []string
					for k := range keys {
						if k != key {
							others = append(others, k)
						}
					}
					mu.Unlock()
					rec := httptest.NewRecorder()
					next.ServeHTTP(rec, req)
					if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/campaigns/") && rec.Code == http.StatusNotFound {
						for _, k := range others {
							if alt := sideRequest(next, k, http.MethodGet, req.URL.Path, ""); alt.Code == http.StatusOK {
								rec = alt
								break
							}
						}
					}
					for k, v := range rec.Header() {
						w.Header()[k] = v
					}
					w.WriteHeader(rec.Code)
					_, _ = w.Write(rec.Body.Bytes())
				})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.wrap(sandboxtest.NewHandler(t, sandboxtest.Options{})))
			t.Cleanup(srv.Close)
			var summary bytes.Buffer
			rep, err := conformance.Run(context.Background(), conformance.Config{
				BaseURL: srv.URL, APIKey: suiteKey, Profile: conformance.ProfileSandbox,
				Seed: 1, Summary: &summary, Timeout: time.Minute,
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := rep.ExitCode(); got != conformance.ExitDeviations {
				t.Fatalf("exit code %d, want %d (deviations)\n%s", got, conformance.ExitDeviations, summary.String())
			}
		})
	}
}
