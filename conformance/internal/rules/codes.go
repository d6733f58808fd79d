package rules

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// errorStatus is the one status each of the sandbox's error codes comes
// with (ERR-4, ERR-5). INJECTED_FAILURE is not here: only a planned fault
// answers it, and such answers are the model's to judge.
var errorStatus = map[string]int{
	"VALIDATION_ERROR":          http.StatusBadRequest,
	"INVALID_JSON":              http.StatusBadRequest,
	"INVALID_PARAMETER":         http.StatusBadRequest,
	"INVALID_API_KEY":           http.StatusUnauthorized,
	"NOT_FOUND":                 http.StatusNotFound,
	"METHOD_NOT_ALLOWED":        http.StatusMethodNotAllowed,
	"REQUEST_TIMEOUT":           http.StatusRequestTimeout,
	"INVALID_STATUS_TRANSITION": http.StatusConflict,
	"CONFLICT":                  http.StatusConflict,
	"LIMIT_REACHED":             http.StatusConflict,
	"PAYLOAD_TOO_LARGE":         http.StatusRequestEntityTooLarge,
	"URI_TOO_LONG":              http.StatusRequestURITooLong,
	"UNSUPPORTED_MEDIA_TYPE":    http.StatusUnsupportedMediaType,
	"RATE_LIMIT_EXCEEDED":       http.StatusTooManyRequests,
	"INTERNAL_ERROR":            http.StatusInternalServerError,
	"HTTPS_REQUIRED":            http.StatusBadRequest,
}

// checkErrorCode holds an error envelope the deployment wrote itself to
// the sandbox's codes: a documented code (ERR-4) with its one status
// (ERR-5). It says nothing of an answer that is not an error envelope;
// the envelope rules judge those.
func checkErrorCode(e *wire.Exchange) (judged bool, err error) {
	v, jerr := e.JSON()
	if jerr != nil {
		return false, nil
	}
	m, _ := v.(map[string]any)
	eo, _ := m["error"].(map[string]any)
	code, ok := eo["code"].(string)
	if !ok || e.Status < 400 {
		return false, nil
	}
	status, known := errorStatus[code]
	if !known {
		return true, broken("ERR-4", "error code rule: %q is not one of the sandbox's codes (docs/contract.md ERR-4)", code)
	}
	if status != e.Status {
		return true, broken("ERR-5", "error code rule: %s comes with HTTP %d, got HTTP %d", code, status, e.Status)
	}
	return true, nil
}

// hdrScope names the budget a 429 or a set of rate-limit headers reports
// (RATE-14).
const hdrScope = "X-RateLimit-Scope"

// checkScope holds a sandbox answer that reports a budget, by rate-limit
// headers or by a 429, to naming it: key for the /v1 windows, controls for
// the controls' budget, client for a per-client one (RATE-14). A path
// tells which of the first two it may be.
func checkScope(path string, e *wire.Exchange) (judged bool, err error) {
	if e.Header.Get(HdrLimit) == "" && e.Status != http.StatusTooManyRequests {
		return false, nil
	}
	scope := e.Header.Get(hdrScope)
	own := "key"
	if strings.HasPrefix(path, "/_sandbox/") {
		own = "controls"
	}
	if scope != own && scope != "client" {
		what := "rate-limit headers"
		if e.Status == http.StatusTooManyRequests {
			what = "a 429"
		}
		return true, broken("RATE-14", "rate-limit scope rule: %s on %s must carry %s %q or \"client\", got %s", what, path, hdrScope, own, quoteOrNothing(scope))
	}
	return true, nil
}

func quoteOrNothing(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}
