package clientverdict_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox/app"
	"github.com/testcampaign/kit/sandbox/clientverdict"
	"github.com/testcampaign/kit/sandbox/ratelimit"
)

// BenchmarkVerdictOfAFullTrace measures GET /_sandbox/verdict through the
// assembled handler for an account whose trace is full: 10,000 requests,
// GETs and POSTs, some failing and retried, as a long test suite leaves
// them. docs/performance.md has its figure.
func BenchmarkVerdictOfAFullTrace(b *testing.B) {
	built, err := app.New(app.Config{
		FrozenAt:      frozenAt,
		Limits:        ratelimit.Limits{Minute: 1_000_000, Hour: 1_000_000, Day: 1_000_000},
		ControlLimits: ratelimit.Limits{Minute: 1_000_000, Hour: 1_000_000, Day: 1_000_000},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(built.Close)
	const key = "svc_test_benchmark"
	serve := func(method, path, body string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		built.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	serve(http.MethodPost, "/_sandbox/faults", `{"path":"/v1/testers","status":503,"rate":0.2,"seed":7}`)
	for i := 0; i < clientverdict.MaxExchanges; i++ {
		switch i % 10 {
		case 0:
			serve(http.MethodPost, "/v1/campaigns", newCampaign)
		case 1, 2, 3:
			serve(http.MethodGet, "/v1/testers", "")
		case 4:
			serve(http.MethodPost, "/v1/campaigns", `{"name":""}`)
		default:
			serve(http.MethodGet, "/v1/campaigns?platform=ios", "")
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if code := serve(http.MethodGet, "/_sandbox/verdict", ""); code != http.StatusOK {
			b.Fatalf("verdict answered %d", code)
		}
	}
}

// BenchmarkVerdictOfAHostileTrace measures GET /_sandbox/verdict through
// the assembled handler for an account whose trace is full of requests
// that break rules, several each, as a tenant who wants the verdict to cost
// the most leaves it: a key in the query under a misspelt scheme, a 404
// sent again at once, a body of the wrong type refused and sent again,
// failures retried at once past any count, POSTs whose answers were lost
// sent again. docs/performance.md has its figure beside the ordinary one's.
func BenchmarkVerdictOfAHostileTrace(b *testing.B) {
	built, err := app.New(app.Config{
		FrozenAt:      frozenAt,
		Limits:        ratelimit.Limits{Minute: 1_000_000, Hour: 1_000_000, Day: 1_000_000},
		ControlLimits: ratelimit.Limits{Minute: 1_000_000, Hour: 1_000_000, Day: 1_000_000},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(built.Close)
	const key = "svc_test_benchmark_hostile"
	serve := func(method, path, body, scheme, contentType string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", scheme+" "+key)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		built.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	serve(http.MethodPost, "/_sandbox/faults", `{"path":"/v1/testers","status":500,"count":1000000}`, "Bearer", "application/json")
	for i := 0; i < clientverdict.MaxExchanges; i++ {
		switch i % 5 {
		case 0:
			serve(http.MethodGet, "/v1/campaigns/cmp_999999?api_key="+key, "", "bearer", "")
		case 1:
			serve(http.MethodPost, "/v1/campaigns", fmt.Sprintf(`{"name":"%d"}`, i/10), "Bearer", "text/plain")
		case 2:
			serve(http.MethodGet, "/v1/testers", "", "Bearer", "")
		case 3:
			serve(http.MethodPost, "/_sandbox/faults", `{"method":"POST","path":"/v1/campaigns","network":"malformed"}`, "Bearer", "application/json")
			serve(http.MethodPost, "/v1/campaigns", newCampaign, "Bearer", "application/json")
		default:
			serve(http.MethodPost, "/v1/campaigns", newCampaign, "Bearer", "application/json")
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if code := serve(http.MethodGet, "/_sandbox/verdict", "", "Bearer", ""); code != http.StatusOK {
			b.Fatalf("verdict answered %d", code)
		}
	}
}
