package rules

import (
	"net/http"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/wire"
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
		{"a malformed answer", wire.ProfileSandbox, answer(200, faulted, `{"success": tru`), true},
		{"a status fault's own body", wire.ProfileSandbox, answer(503, faulted, `<html>down</html>`), true},
		{"a status fault's envelope", wire.ProfileSandbox, answer(503, faulted, `{"success":false,"error":{"code":"INJECTED_FAILURE","message":"m","status":503}}`), false},
		{"a delayed success", wire.ProfileSandbox, answer(200, faulted, `{"success":true,"data":{}}`), false},
		{"a broken body nobody planned", wire.ProfileSandbox, answer(200, nil, `{"success": tru`), false},
		{"the header from a deployment that is not the sandbox", wire.ProfileSpec, answer(200, faulted, `{"success": tru`), false},
	} {
		if got := FaultWroteBody(c.profile, c.e); got != c.want {
			t.Errorf("%s: FaultWroteBody = %t, want %t", c.name, got, c.want)
		}
	}
}
