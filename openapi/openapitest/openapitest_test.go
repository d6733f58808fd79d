package openapitest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/testcampaign/kit/openapi"
	"github.com/testcampaign/kit/openapi/openapitest"
)

func TestCheckingReportsWhatTheHandlerGetsWrong(t *testing.T) {
	const campaign = `{"id":"cmp_000001","name":"Beta","platform":"ios","testersRequired":%s,"rewardPerBug":19.99,"status":"draft","createdAt":"2026-01-01T00:00:30.000Z"}`
	const body = `{"name":"Beta","platform":"ios","testersRequired":5,"rewardPerBug":19.99}`
	tests := []struct {
		name           string
		testersAnswer  string
		wantViolations []string
	}{
		{"an answer as documented", "5", nil},
		{"a number answered as a string", `"5"`, []string{"$.data.testersRequired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var read string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ := io.ReadAll(r.Body)
				read = string(got)
				w.Header().Set("Content-Type", "application/json")
				for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					w.Header().Set(name, "1")
				}
				_, _ = io.WriteString(w, `{"success":true,"data":`+strings.Replace(campaign, "%s", tt.testersAnswer, 1)+`}`)
			})
			var got []string
			checked := openapitest.Checking(openapitest.Default(t), h, func(_ *http.Request, _ int, v openapi.Violation) {
				got = append(got, v.Path)
			})
			req := httptest.NewRequest("POST", "/v1/campaigns", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer svc_test_0123456789")
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			checked.ServeHTTP(rec, req)

			if read != body {
				t.Errorf("the handler read %q, want the body as sent", read)
			}
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"success":true`) {
				t.Errorf("the client got %d %s, want the handler's answer", rec.Code, rec.Body)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantViolations, ",") {
				t.Errorf("violations at %v, want %v", got, tt.wantViolations)
			}
		})
	}
}
