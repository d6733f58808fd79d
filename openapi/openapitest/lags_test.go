package openapitest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/openapi"
	"github.com/testcampaign/kit/openapi/openapitest"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestSandboxLagsContract shows each known lag on one exchange. While the lag
// lasts the test is skipped with the failing exchange; once the sandbox does
// what CONTRACT.md says, it fails so that the lag is removed from Lags and
// the drift check covers that ground again.
func TestSandboxLagsContract(t *testing.T) {
	exchanges := map[string]struct{ method, target, body string }{
		"timestamps":                 {"POST", "/v1/campaigns", `{"name":"Lag","platform":"web","testersRequired":1,"rewardPerBug":1}`},
		"control rate-limit headers": {"GET", "/_sandbox/events", ""},
	}
	for _, lag := range openapitest.Lags {
		t.Run(lag.Name, func(t *testing.T) {
			ex, ok := exchanges[lag.Name]
			if !ok {
				t.Fatalf("no exchange shows lag %q", lag.Name)
			}
			var shown []string
			sandbox := sandboxtest.NewHandler(t, sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)})
			h := openapitest.Checking(openapitest.Default(t), sandbox, func(r *http.Request, status int, v openapi.Violation) {
				if got := openapitest.KnownLag(r, v); got != nil && got.Name == lag.Name {
					shown = append(shown, v.String())
				}
			})
			req := httptest.NewRequest(ex.method, ex.target, strings.NewReader(ex.body))
			req.Header.Set("Authorization", "Bearer svc_test_0123456789")
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), req)
			if len(shown) == 0 {
				t.Fatalf("%s %s no longer shows lag %q: remove it from openapitest.Lags", ex.method, ex.target, lag.Name)
			}
			t.Skipf("sandbox lags CONTRACT: %s; %s %s gives: %s", lag.Reason, ex.method, ex.target, strings.Join(shown, "; "))
		})
	}
}
