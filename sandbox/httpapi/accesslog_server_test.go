package httpapi_test

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// TestTheRequestLogIsTheSameThroughTheServer serves the same requests from
// a server logging through slog's handlers and one logging through
// NewLogHandler's, and compares their lines but for the time and duration.
func TestTheRequestLogIsTheSameThroughTheServer(t *testing.T) {
	requests := []struct{ method, target, key string }{
		{"GET", "/v1/campaigns/cmp_000001", "svc_test_log_first_0123456789"},
		{"GET", "/v1/campaigns?limit=2", "svc_test_log_first_0123456789"},
		{"GET", "/v1/campaigns/a%20b", "svc_test_log_other_0123456789"},
		{"DELETE", "/v1/campaigns", "svc_test_log_first_0123456789"},
		{"GET", "/healthz", ""},
		{"GET", "/nowhere/" + "svc_test_log_in_a_path_012345", ""},
		{"GET", "/v1/testers", "not a key"},
	}
	varying := regexp.MustCompile(`time=\S+|duration=\S+|"time":"[^"]+"|"duration":\d+`)
	for _, json := range []bool{false, true} {
		var logs [2]bytes.Buffer
		for i, h := range []slog.Handler{slog.NewTextHandler(&logs[0], nil), httpapi.NewLogHandler(&logs[1], json)} {
			if json && i == 0 {
				h = slog.NewJSONHandler(&logs[0], nil)
			}
			s := sandboxtest.NewHandler(t, sandboxtest.Options{Logger: slog.New(h)})
			for _, r := range requests {
				req := httptest.NewRequest(r.method, r.target, nil)
				if r.key != "" {
					req.Header.Set("Authorization", "Bearer "+r.key)
				}
				s.ServeHTTP(httptest.NewRecorder(), req)
			}
		}
		want, got := varying.ReplaceAllString(logs[0].String(), "_"), varying.ReplaceAllString(logs[1].String(), "_")
		if got != want || strings.Count(got, "\n") != len(requests) {
			t.Errorf("json %v: hand-written lines\n%s\nslog's lines\n%s", json, got, want)
		}
	}
}
