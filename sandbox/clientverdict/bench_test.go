package clientverdict_test

import (
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
		FrozenAt: frozenAt,
		Limits:   ratelimit.Limits{Minute: 1_000_000, Hour: 1_000_000, Day: 1_000_000},
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
