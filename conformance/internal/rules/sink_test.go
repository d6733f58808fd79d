package rules

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

func TestLeaks(t *testing.T) {
	const key = "svc_test_0123456789abcdef"
	tests := []struct {
		text string
		want bool
	}{
		{"key svc_test_…cdef refused", false},
		{"key svc_test_0123456789abcdef refused", true},
		{"secret 0123456789abcdef refused", true},
		{"key svc_test_0123456789ab… refused", true},
		{"key svc_test_0123…cdef refused", true},
		{"key …3456789abcde refused", true},
		{"svc_test_ keys end in cdef", false},
		{"nothing here", false},
	}
	for _, tt := range tests {
		if got := leaks([]byte(tt.text), key); got != tt.want {
			t.Errorf("leaks(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// Only a body the sandbox's fault wrote in place of the envelope is let off
// the document's check; a faulted envelope, and any body elsewhere, is not.
func TestFaultWroteBody(t *testing.T) {
	faulted := http.Header{"X-Sandbox-Fault": {"flt_000001"}}
	for _, c := range []struct {
		name    string
		profile string
		e       *wire.Exchange
		want    bool
	}{
		{"a malformed answer", kit.ProfileSandbox, answer(200, faulted, `{"success": tru`), true},
		{"a status fault's own body", kit.ProfileSandbox, answer(503, faulted, `<html>down</html>`), true},
		{"a status fault's envelope", kit.ProfileSandbox, answer(503, faulted, `{"success":false,"error":{"code":"INJECTED_FAILURE","message":"m","status":503}}`), false},
		{"a delayed success", kit.ProfileSandbox, answer(200, faulted, `{"success":true,"data":{}}`), false},
		{"a broken body nobody planned", kit.ProfileSandbox, answer(200, nil, `{"success": tru`), false},
		{"the header from a deployment that is not the sandbox", kit.ProfileSpec, answer(200, faulted, `{"success": tru`), false},
	} {
		if got := FaultWroteBody(c.profile, c.e); got != c.want {
			t.Errorf("%s: FaultWroteBody = %t, want %t", c.name, got, c.want)
		}
	}
}

// The spec holds an API answer to some JSON content type (ENV-8); the
// sandbox holds every answer it writes to exactly application/json (ENV-9),
// outside /v1 and on HEAD too, and a preflight answered as one to none.
func TestContentTypeRules(t *testing.T) {
	const ok = `{"success":true,"data":{}}`
	json := func(ct string) http.Header { return http.Header{"Content-Type": {ct}} }
	for _, c := range []struct {
		name    string
		profile string
		method  string
		path    string
		reqHdr  http.Header
		e       *wire.Exchange
		want    []string
	}{
		{"an exact type", kit.ProfileSandbox, "GET", "/v1/campaigns", nil, answer(200, json("application/json"), ok), nil},
		{"a charset in the API, sandbox", kit.ProfileSandbox, "GET", "/v1/campaigns", nil, answer(200, json("application/json; charset=utf-8"), ok), []string{"ENV-9"}},
		{"a charset in the API, spec", kit.ProfileSpec, "GET", "/v1/campaigns", nil, answer(200, json("application/json; charset=utf-8"), ok), nil},
		{"HTML in the API, spec", kit.ProfileSpec, "GET", "/v1/campaigns", nil, answer(200, json("text/html"), ok), []string{"ENV-8"}},
		{"HTML in the API, sandbox", kit.ProfileSandbox, "GET", "/v1/campaigns", nil, answer(200, json("text/html"), ok), []string{"ENV-8", "ENV-9"}},
		{"a +json type of the controls", kit.ProfileSandbox, "GET", "/_sandbox/journal", nil, answer(200, json("application/problem+json"), ok), []string{"ENV-9"}},
		{"plain text from the health check", kit.ProfileSandbox, "GET", "/healthz", nil, answer(200, json("text/plain"), ok), []string{"ENV-9"}},
		{"a charset on the health check", kit.ProfileSandbox, "GET", "/healthz", nil, answer(200, json("application/json; charset=utf-8"), ok), []string{"ENV-9"}},
		{"plain text outside the API, spec", kit.ProfileSpec, "GET", "/healthz", nil, answer(200, json("text/plain"), ""), nil},
		{"a charset on HEAD", kit.ProfileSandbox, "HEAD", "/v1/campaigns", nil, answer(200, json("application/json; charset=utf-8"), ""), []string{"ENV-9"}},
		{"the document as it is", kit.ProfileSandbox, "GET", "/openapi.yaml", nil, answer(200, json("application/yaml"), "openapi: 3.1.0"), nil},
		{"a preflight answered as one", kit.ProfileSandbox, "OPTIONS", "/v1/campaigns", http.Header{"Access-Control-Request-Method": {"POST"}},
			answer(204, http.Header{"Access-Control-Allow-Origin": {"*"}}, ""), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, nil)
			maps.Copy(req.Header, c.reqHdr)
			sink := NewSink(nil)
			CheckResponse(c.profile, sink, req, c.e)
			var got []string
			for _, v := range sink.violations {
				got = append(got, v.ID)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("broken rules %v, want %v", got, c.want)
			}
		})
	}
}
