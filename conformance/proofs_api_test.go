package conformance_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// apiProofs break one rule each of the envelope, auth, errors, routing and
// shared-sandbox rules (ENV, AUTH, ERR, ROUTE, SHR), and the breaks of the
// other areas that the built-in suite was first proven against.
func apiProofs() []proof {
	return slices.Concat(envelopeProofs(), authProofs(), errorProofs(), routeProofs(), firstBreakProofs())
}

// refuse rewrites an answer into a refusal with the status and code given.
func (r *response) refuse(status int, code string) {
	r.status = status
	r.header.Set("Content-Type", "application/json")
	r.body = []byte(`{"success":false,"error":{"code":"` + code + `","message":"refused","status":` + strconv.Itoa(status) + `}}`)
}

// unknownRouteAnswered is a deployment that refuses a request for no route
// of the API with status and code in place of 404 NOT_FOUND.
func unknownRouteAnswered(status int, code string) func(http.Handler) http.Handler {
	return answers(func(req *http.Request, r *response) {
		if inAPI(req) && r.status == http.StatusNotFound && bytes.Contains(r.body, []byte("no route for")) {
			r.refuse(status, code)
		}
	})
}

func inAPI(req *http.Request) bool { return strings.HasPrefix(req.URL.Path, "/v1/") }

// scheme is the scheme word of a request's Authorization header.
func scheme(req *http.Request) string {
	s, _, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	return s
}

func envelopeProofs() []proof {
	return []proof{
		{
			name: "success is the string \"true\"", rule: "ENV-1",
			says:   "envelope rule (spec §4): \"success\" must be a boolean",
			caught: []string{"GET /v1/campaigns answers in the envelope", "GET /v1/analytics succeeds with data as an object", "A new campaign is a draft"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.envelope(func(m map[string]any) {
					if m["success"] == true {
						m["success"] = "true"
					}
				})
			}),
		},
		{
			name: "success left out of failures", rule: "ENV-1",
			says:   "\"success\" is missing",
			caught: []string{"A refused request answers with the error envelope", "PATCH /v1/bugs/bug_conform_no_such answers in the envelope"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.envelope(func(m map[string]any) {
					if m["success"] == false {
						delete(m, "success")
					}
				})
			}),
		},
		{
			name: "data is an array", rule: "ENV-2",
			says:   "\"data\" must be an object",
			caught: []string{"GET /v1/bugs succeeds with data as an object", "GET /v1/testers answers in the envelope"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.envelope(func(m map[string]any) {
					if d, ok := m["data"]; ok {
						m["data"] = []any{d}
					}
				})
			}),
		},
		{
			name: "a failure's error object called errors", rule: "ENV-3",
			caught: []string{"A refused request answers with the error envelope"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.envelope(func(m map[string]any) {
					if e, ok := m["error"]; ok {
						delete(m, "error")
						m["errors"] = []any{e}
					}
				})
			}),
		},
		{
			name: "error.code a number", rule: "ENV-4",
			caught: []string{"An error repeats its HTTP status and carries a code and a message"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) { e["code"] = json.Number(strconv.Itoa(r.status)) })
			}),
		},
		{
			name: "error.message missing", rule: "ENV-5",
			says:   "\"error.message\" must be a string",
			caught: []string{"A refused request answers with the error envelope", "POST /v1/webhooks answers in the envelope"},
			wrap:   answers(func(_ *http.Request, r *response) { r.errorObject(func(e map[string]any) { delete(e, "message") }) }),
		},
		{
			name: "error.status differs from the HTTP status", rule: "ENV-6",
			says:   "\"error.status\" must repeat the HTTP status",
			caught: []string{"An error repeats its HTTP status and carries a code and a message", "GET /v1/campaigns/cmp_conform_no_such answers in the envelope", "GET /v1/testers rejects an invalid key with 401 INVALID_API_KEY"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) { e["status"] = json.Number("400") })
			}),
		},
		{
			name: "error.status a string", rule: "ENV-6",
			says:   "\"error.status\" must be an integer",
			caught: []string{"A refused request answers with the error envelope", "An error repeats its HTTP status and carries a code and a message"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) { e["status"] = strconv.Itoa(r.status) })
			}),
		},
		{
			name: "error.status wrong only on 405", rule: "ENV-6",
			says:   "\"error.status\" must repeat the HTTP status 405",
			caught: []string{"A wrong method is 405 METHOD_NOT_ALLOWED with Allow"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusMethodNotAllowed {
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("400") })
				}
			}),
		},
		{
			name: "an unknown route answered 200 with the error envelope", rule: "ENV-7",
			caught: []string{"An unknown route is 404 NOT_FOUND"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusNotFound && bytes.Contains(r.body, []byte("no route for")) {
					r.status = http.StatusOK
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("200") })
				}
			}),
		},
		{
			name: "text/plain content type", rule: "ENV-8",
			says:   "want Content-Type application/json",
			caught: []string{"GET /v1/campaigns answers with a JSON content type", "Errors answer with a JSON content type"},
			wrap:   answers(func(_ *http.Request, r *response) { r.header.Set("Content-Type", "text/plain; charset=utf-8") }),
		},
		{
			name: "HTML on 404", rule: "ENV-8",
			says:   "every response is JSON with a JSON content type",
			caught: []string{"An unknown id is 404 NOT_FOUND", "An unknown route is 404 NOT_FOUND"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusNotFound {
					r.header.Set("Content-Type", "text/html")
				}
			}),
		},
		{
			name: "a charset added to the content type", rule: "ENV-9",
			wrap: answers(func(req *http.Request, r *response) {
				if inAPI(req) && r.header.Get("Content-Type") == "application/json" {
					r.header.Set("Content-Type", "application/json; charset=utf-8")
				}
			}),
		},
		{
			name: "the controls answer with a +json content type", rule: "ENV-9",
			wrap: answers(func(req *http.Request, r *response) {
				if strings.HasPrefix(req.URL.Path, "/_sandbox/") {
					r.header.Set("Content-Type", "application/problem+json")
				}
			}),
		},
		{
			name: "a creation answered 201", rule: "ENV-10",
			caught: []string{"Creation is 200 with the whole campaign record"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && r.status == http.StatusOK && inAPI(req) {
					r.status = http.StatusCreated
				}
			}),
		},
		{
			name: "a webhook registration answered 201", rule: "ENV-10",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/webhooks" && r.status == http.StatusOK {
					r.status = http.StatusCreated
				}
			}),
		},
		{
			name: "timestamps with an offset instead of Z", rule: "ENV-11",
			says:   "exactly three fractional digits",
			caught: []string{"Timestamps are RFC 3339 in UTC with milliseconds"},
			wrap:   answers(func(_ *http.Request, r *response) { r.body = bytes.ReplaceAll(r.body, []byte(`Z"`), []byte(`+00:00"`)) }),
		},
		{
			name: "timestamps with trailing zeros trimmed", rule: "ENV-11", opts: frozen,
			says:   "exactly three fractional digits",
			caught: []string{"Timestamps are RFC 3339 in UTC with milliseconds", "Bug timestamps are RFC 3339 in UTC with milliseconds"},
			wrap:   answers(func(_ *http.Request, r *response) { r.body = bytes.ReplaceAll(r.body, []byte(`.000Z"`), []byte(`Z"`)) }),
		},
		{
			name: "trimmed timestamps only in PATCH answers", rule: "ENV-11", opts: frozen,
			says: "every timestamp is RFC 3339 UTC with three fractional digits",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPatch {
					r.body = bytes.ReplaceAll(r.body, []byte(`.000Z"`), []byte(`Z"`))
				}
			}),
		},
	}
}

func authProofs() []proof {
	return []proof{
		{
			name: "200 for a request without a key", rule: "AUTH-1",
			says:   "want a refusal",
			caught: []string{"GET /v1/campaigns refuses a request without credentials", "GET /v1/bugs refuses a request without credentials", "GET /v1/analytics refuses a request without credentials"},
			wrap: asks(func(r *http.Request) {
				if r.Header.Get("Authorization") == "" && inAPI(r) {
					r.Header.Set("Authorization", "Bearer svc_test_injected_by_proxy")
				}
			}),
		},
		{
			name: "the bare key taken without a scheme", rule: "AUTH-1",
			caught: []string{"A key sent without the Bearer scheme is not accepted"},
			wrap: asks(func(r *http.Request) {
				if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "svc_test_") {
					r.Header.Set("Authorization", "Bearer "+h)
				}
			}),
		},
		{
			name: "a valid key refused on GET /v1/campaigns", rule: "AUTH-2",
			caught: []string{"The configured key is accepted as a Bearer token"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/campaigns") && r.status == http.StatusOK && req.URL.RawQuery == "" {
					r.refuse(http.StatusUnauthorized, "INVALID_API_KEY")
					r.header.Set("WWW-Authenticate", "Bearer")
				}
			}),
		},
		{
			name: "401 without INVALID_API_KEY", rule: "AUTH-3",
			says:   "\"UNAUTHORIZED\" is not one of the sandbox's codes",
			caught: []string{"GET /v1/bugs rejects an invalid key with 401 INVALID_API_KEY", "An error repeats its HTTP status and carries a code and a message"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusUnauthorized {
					r.errorObject(func(e map[string]any) { e["code"] = "UNAUTHORIZED" })
				}
			}),
		},
		{
			name: "403 for an invalid key", rule: "AUTH-3",
			says:   "INVALID_API_KEY comes with HTTP 401, got HTTP 403",
			caught: []string{"PATCH /v1/bugs/bug_conform_no_such rejects an invalid key with 401 INVALID_API_KEY"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusUnauthorized {
					r.status = http.StatusForbidden
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("403") })
				}
			}),
		},
		{
			name: "an expired key refused with KEY_EXPIRED", rule: "AUTH-4",
			caught: []string{"GET /v1/testers refuses an expired test key with 401 INVALID_API_KEY"},
			wrap: answers(func(req *http.Request, r *response) {
				if strings.HasPrefix(bearer(req), "svc_test_expired") {
					r.errorObject(func(e map[string]any) { e["code"] = "KEY_EXPIRED" })
				}
			}),
		},
		{
			name: "an expired key accepted", rule: "AUTH-13",
			caught: []string{"POST /v1/webhooks refuses an expired test key with 401 INVALID_API_KEY"},
			wrap: asks(func(r *http.Request) {
				if k := bearer(r); strings.HasPrefix(k, "svc_test_expired") {
					r.Header.Set("Authorization", "Bearer svc_test_was_"+strings.TrimPrefix(k, "svc_test_"))
				}
			}),
		},
		{
			name: "no WWW-Authenticate on 401", rule: "AUTH-5",
			says:   "WWW-Authenticate is missing",
			caught: []string{"The sandbox refuses GET /v1/campaigns without a header with 401 INVALID_API_KEY", "The sandbox refuses an expired key with 401 INVALID_API_KEY, saying why"},
			wrap:   answers(func(_ *http.Request, r *response) { r.header.Del("WWW-Authenticate") }),
		},
		{
			name: "WWW-Authenticate only on GET", rule: "AUTH-5",
			says:   "WWW-Authenticate is missing",
			caught: []string{"The sandbox refuses POST /v1/campaigns without a header with 401 INVALID_API_KEY", "The sandbox refuses a live key on PATCH /v1/bugs/bug_conform_no_such, without echoing it"},
			wrap: answers(func(req *http.Request, r *response) {
				if r.status == http.StatusUnauthorized && req.Method != http.MethodGet {
					r.header.Del("WWW-Authenticate")
				}
			}),
		},
		{
			name: "the key echoed by one endpoint", rule: "AUTH-6",
			says:   "a key is never echoed whole",
			caught: []string{"GET /v1/testers rejects an invalid key with 401 INVALID_API_KEY"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/testers" && r.status == http.StatusUnauthorized {
					r.errorObject(func(e map[string]any) { e["message"] = "bad key " + bearer(req) })
				}
			}),
		},
		{
			name: "the secret echoed without its prefix", rule: "AUTH-6",
			says:   "a key is never echoed whole",
			caught: []string{"GET /v1/bugs rejects an invalid key with 401 INVALID_API_KEY"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/bugs" && r.status == http.StatusUnauthorized {
					r.errorObject(func(e map[string]any) {
						e["message"] = "unknown secret " + strings.TrimPrefix(bearer(req), "svc_test_")
					})
				}
			}),
		},
		{
			name: "the operator's key echoed in a header", rule: "AUTH-6",
			says:   "a key is never echoed whole",
			caught: []string{"Reading analytics succeeds"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/analytics" {
					r.header.Set("X-Seen-Key", bearer(req))
				}
			}),
		},
		{
			name: "a key's first characters echoed before its hint", rule: "AUTH-6",
			wrap: answers(func(req *http.Request, r *response) {
				k := bearer(req)
				if r.status == http.StatusUnauthorized && strings.HasPrefix(k, "svc_") && len(k) > 21 {
					r.errorObject(func(e map[string]any) { e["message"] = "API key " + k[:13] + "…" + k[len(k)-4:] + " is not valid" })
				}
			}),
		},
		{
			name: "a missing header answered 403", rule: "AUTH-7",
			says:   "INVALID_API_KEY comes with HTTP 401, got HTTP 403",
			caught: []string{"The sandbox refuses PATCH /v1/bugs/bug_conform_no_such without a header with 401 INVALID_API_KEY"},
			wrap: answers(func(req *http.Request, r *response) {
				if r.status == http.StatusUnauthorized && req.Method == http.MethodPatch && req.Header.Get("Authorization") == "" {
					r.status = http.StatusForbidden
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("403") })
				}
			}),
		},
		{
			name: "another scheme taken as Bearer", rule: "AUTH-8",
			caught: []string{"The sandbox refuses a Token scheme with 401 INVALID_API_KEY, saying why"},
			wrap: asks(func(r *http.Request) {
				if _, key, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && !strings.EqualFold(scheme(r), "Bearer") {
					r.Header.Set("Authorization", "Bearer "+key)
				}
			}),
		},
		{
			name: "a lower-case scheme refused", rule: "AUTH-9",
			says:   "want HTTP status 200, got 401",
			caught: []string{"The scheme word is matched in any case: bearer"},
			wrap: asks(func(r *http.Request) {
				if scheme(r) == "bearer" {
					r.Header.Set("Authorization", "Bearer not_a_key")
				}
			}),
		},
		{
			name: "an upper-case scheme refused", rule: "AUTH-9",
			wrap: asks(func(r *http.Request) {
				if scheme(r) == "BEARER" {
					r.Header.Set("Authorization", "Bearer not_a_key")
				}
			}),
		},
		{
			name: "a secret of 128 characters refused", rule: "AUTH-10",
			caught: []string{"A secret of 128 characters is accepted"},
			wrap: asks(func(r *http.Request) {
				if tok := bearer(r); len(tok) == len("svc_test_")+128 {
					r.Header.Set("Authorization", "Bearer "+tok+"A")
				}
			}),
		},
		{
			name: "a 129-character secret accepted", rule: "AUTH-11",
			says:   "want HTTP status 401, got 200",
			caught: []string{"A secret of 129 characters is refused"},
			wrap: asks(func(r *http.Request) {
				if tok := bearer(r); len(tok) == len("svc_test_")+129 {
					r.Header.Set("Authorization", "Bearer "+tok[:len(tok)-1])
				}
			}),
		},
		{
			name: "live keys accepted on PATCH", rule: "AUTH-12",
			says:   "want HTTP status 401, got",
			caught: []string{"The sandbox refuses a live key on PATCH /v1/bugs/bug_conform_no_such, without echoing it"},
			wrap: asks(func(r *http.Request) {
				if r.Method == http.MethodPatch && strings.HasPrefix(bearer(r), "svc_live_") {
					r.Header.Set("Authorization", "Bearer svc_test_live_let_through")
				}
			}),
		},
		{
			name: "every 401 says only that the key is invalid", rule: "AUTH-14",
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusUnauthorized {
					r.errorObject(func(e map[string]any) { e["message"] = "invalid API key" })
				}
			}),
		},
		{
			name: "an unknown route routed before the key is read", rule: "AUTH-15",
			wrap: answers(func(req *http.Request, r *response) {
				if r.status == http.StatusUnauthorized && bytes.Contains(r.body, []byte("missing Authorization")) && !knownRoute(req.URL.Path) {
					r.refuse(http.StatusNotFound, "NOT_FOUND")
					r.header.Del("WWW-Authenticate")
				}
			}),
		},
	}
}

// knownRoute says whether a path is one of the API's or the controls'
// routes, for a deployment that routes before it authenticates.
func knownRoute(p string) bool {
	switch {
	case p == "/v1/campaigns", p == "/v1/bugs", p == "/v1/testers", p == "/v1/analytics", p == "/v1/webhooks":
		return true
	case strings.HasPrefix(p, "/v1/campaigns/") && strings.Count(p, "/") == 3,
		strings.HasPrefix(p, "/v1/bugs/") && strings.Count(p, "/") == 3:
		return !strings.HasSuffix(p, "/")
	}
	return strings.HasPrefix(p, "/_sandbox/") && strings.Count(p, "/") == 2
}

func errorProofs() []proof {
	return []proof{
		{
			name: "500 instead of 400 for malformed JSON", rule: "ERR-1",
			says:   "want 400 INVALID_JSON, got 500 INTERNAL_ERROR",
			caught: []string{"Malformed JSON is 400 INVALID_JSON"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusBadRequest && bytes.Contains(r.body, []byte("INVALID_JSON")) {
					r.status = http.StatusInternalServerError
					r.errorObject(func(e map[string]any) { e["status"], e["code"] = json.Number("500"), "INTERNAL_ERROR" })
				}
			}),
		},
		{
			name: "200 for an unknown id", rule: "ERR-2",
			says:   "want HTTP status 404, got 200",
			caught: []string{"An unknown id is 404 NOT_FOUND"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusNotFound {
					r.status, r.body = http.StatusOK, []byte(`{"success": true, "data": {}}`)
				}
			}),
		},
		{
			name: "an unknown route under /v1 answered 400", rule: "ERR-3",
			caught: []string{"An unknown route is 404 NOT_FOUND"},
			wrap:   unknownRouteAnswered(http.StatusBadRequest, "VALIDATION_ERROR"),
		},
		{
			name: "a validation error without its details", rule: "ERR-6",
			caught: []string{"Invalid fields are 400 VALIDATION_ERROR with one detail per field"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) {
					if e["code"] == "VALIDATION_ERROR" {
						delete(e, "details")
					}
				})
			}),
		},
		{
			name: "malformed JSON answered VALIDATION_ERROR", rule: "ERR-7",
			caught: []string{"Malformed JSON is 400 INVALID_JSON"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) {
					if e["code"] == "INVALID_JSON" {
						e["code"] = "VALIDATION_ERROR"
					}
				})
			}),
		},
		{
			name: "an empty body answered VALIDATION_ERROR", rule: "ERR-8",
			caught: []string{"An empty body where one is expected is 400 INVALID_JSON"},
			wrap: func(next http.Handler) http.Handler {
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					if len(bytes.TrimSpace(body)) == 0 && r.status == http.StatusBadRequest {
						r.errorObject(func(e map[string]any) { e["code"] = "VALIDATION_ERROR" })
					}
				})
			},
		},
		{
			name: "an array body answered VALIDATION_ERROR", rule: "ERR-9",
			wrap: func(next http.Handler) http.Handler {
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					if firstByte(body) != '{' && len(bytes.TrimSpace(body)) > 0 && r.status == http.StatusBadRequest {
						r.errorObject(func(e map[string]any) { e["code"] = "VALIDATION_ERROR" })
					}
				})
			},
		},
		{
			name: "data after the object ignored", rule: "ERR-10",
			caught: []string{"A JSON object followed by more data is 400 INVALID_JSON"},
			wrap: asks(func(r *http.Request) {
				rewriteRaw(r, func(b []byte) []byte {
					dec := json.NewDecoder(bytes.NewReader(b))
					var v json.RawMessage
					if firstByte(b) == '{' && dec.Decode(&v) == nil && dec.More() {
						return v
					}
					return b
				})
			}),
		},
		{
			name: "a repeated field name kept last", rule: "ERR-11",
			wrap: asks(func(r *http.Request) {
				if r.Header.Get("Content-Type") == "application/json" {
					rewriteRaw(r, func(b []byte) []byte {
						dec := json.NewDecoder(bytes.NewReader(b))
						dec.UseNumber()
						var m map[string]any
						if firstByte(b) != '{' || dec.Decode(&m) != nil || dec.More() {
							return b
						}
						kept, _ := json.Marshal(m)
						return kept
					})
				}
			}),
		},
		{
			name: "deep nesting answered VALIDATION_ERROR", rule: "ERR-12",
			caught: []string{"JSON nested deeper than 64 levels is 400 INVALID_JSON"},
			wrap: func(next http.Handler) http.Handler {
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					if bytes.Count(body, []byte("[")) > 64 {
						r.errorObject(func(e map[string]any) { e["code"] = "VALIDATION_ERROR" })
					}
				})
			},
		},
		{
			name: "a long number answered INVALID_JSON", rule: "ERR-14",
			caught: []string{"A number written in more than 32 characters is 400 VALIDATION_ERROR"},
			wrap: func(next http.Handler) http.Handler {
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					if bytes.Contains(body, []byte("1.000000000000000000000000000000000")) {
						r.errorObject(func(e map[string]any) { e["code"] = "INVALID_JSON" })
					}
				})
			},
		},
		{
			name: "an unknown campaign id answered 400", rule: "ERR-15",
			caught: []string{"An unknown id is 404 NOT_FOUND"},
			wrap: answers(func(req *http.Request, r *response) {
				if strings.HasPrefix(req.URL.Path, "/v1/campaigns/") && r.status == http.StatusNotFound {
					r.refuse(http.StatusBadRequest, "INVALID_PARAMETER")
				}
			}),
		},
		{
			name: "an unknown route answered 405", rule: "ERR-16",
			caught: []string{"An unknown route is 404 NOT_FOUND"},
			wrap:   unknownRouteAnswered(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"),
		},
		{
			name: "405 without Allow on one endpoint", rule: "ERR-17",
			says:   "ERR-17 Allow lists exactly the methods the path serves",
			caught: []string{"A wrong method on /v1/testers is 405 METHOD_NOT_ALLOWED, Allow naming GET"},
			wrap: answers(func(req *http.Request, r *response) {
				if r.status == http.StatusMethodNotAllowed && req.URL.Path == "/v1/testers" {
					r.header.Del("Allow")
				}
			}),
		},
		{
			name: "an Allow with an extra method", rule: "ERR-17",
			wrap: answers(func(_ *http.Request, r *response) {
				if a := r.header.Get("Allow"); a != "" && !strings.Contains(a, "DELETE") {
					r.header.Set("Allow", a+", DELETE")
				}
			}),
		},
		{
			name: "an Allow without HEAD", rule: "ERR-17",
			wrap: answers(func(_ *http.Request, r *response) {
				if a := r.header.Get("Allow"); a != "" {
					r.header.Set("Allow", strings.ReplaceAll(a, "HEAD, ", ""))
				}
			}),
		},
		{
			name: "a JSON body with a charset refused", rule: "ERR-18",
			wrap: asks(func(r *http.Request) {
				if ct := r.Header.Get("Content-Type"); strings.Contains(ct, ";") {
					r.Header.Set("Content-Type", "text/plain")
				}
			}),
		},
		{
			name: "a text/plain body read as JSON", rule: "ERR-18",
			caught: []string{"A body that is not JSON is 415 UNSUPPORTED_MEDIA_TYPE"},
			wrap: asks(func(r *http.Request) {
				if r.Header.Get("Content-Type") == "text/plain" {
					r.Header.Set("Content-Type", "application/json")
				}
			}),
		},
		{
			name: "a body over 1 MiB answered 400", rule: "ERR-19",
			caught: []string{"A body of 1 MiB is read, and one byte more is 413 PAYLOAD_TOO_LARGE"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusRequestEntityTooLarge {
					r.refuse(http.StatusBadRequest, "VALIDATION_ERROR")
				}
			}),
		},
		{
			name: "a body bound of a million bytes", rule: "ERR-19",
			caught: []string{"A body of 1 MiB is read, and one byte more is 413 PAYLOAD_TOO_LARGE"},
			wrap: func(next http.Handler) http.Handler {
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					if len(body) > 1_000_000 && r.status != http.StatusRequestEntityTooLarge {
						r.refuse(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
					}
				})
			},
		},
		{
			name: "a query with a semicolon read up to it", rule: "ERR-22",
			caught: []string{"A query string that cannot be read is 400 INVALID_PARAMETER: limit=5;x=1"},
			wrap: asks(func(r *http.Request) {
				if q, _, cut := strings.Cut(r.URL.RawQuery, ";"); cut && inAPI(r) {
					r.URL.RawQuery = q
				}
			}),
		},
	}
}

// firstByte is the first byte of a body past its white space, 0 for none.
func firstByte(b []byte) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func routeProofs() []proof {
	return []proof{
		{
			name: "the /v1 prefix ignored", rule: "ROUTE-1",
			says:   "want a refusal",
			caught: []string{"The version prefix is not optional: /campaigns", "The version prefix is not optional: /v2/campaigns"},
			wrap: asks(func(r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, "/v1/") && !strings.HasPrefix(r.URL.Path, "/_sandbox/") && !strings.HasPrefix(r.URL.Path, "/openapi.") && r.URL.Path != "/healthz" {
					r.URL.Path = "/v1" + versionRe.ReplaceAllString(r.URL.Path, "")
				}
			}),
		},
		{
			name: "paths outside /v1 answered 400", rule: "ROUTE-2",
			caught: []string{"Paths outside /v1 are 404 NOT_FOUND in the envelope: /campaigns"},
			wrap: answers(func(req *http.Request, r *response) {
				if !inAPI(req) && r.status == http.StatusNotFound {
					r.refuse(http.StatusBadRequest, "INVALID_PARAMETER")
				}
			}),
		},
		{
			name: "a trailing slash served", rule: "ROUTE-3",
			wrap: asks(func(r *http.Request) {
				if inAPI(r) && len(r.URL.Path) > len("/v1/") && strings.HasSuffix(r.URL.Path, "/") {
					r.URL.Path = strings.TrimSuffix(r.URL.Path, "/")
				}
			}),
		},
		{
			name: "a path cleaned before it is routed", rule: "ROUTE-4",
			caught: []string{"A path that is not clean is an unknown route, never a redirect: /v1//campaigns"},
			wrap: asks(func(r *http.Request) {
				if strings.Contains(r.URL.Path, "//") || strings.HasSuffix(r.URL.Path, "/.") {
					r.URL.Path = path.Clean(r.URL.Path)
				}
			}),
		},
		{
			name: "HEAD refused with 405", rule: "ROUTE-5",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodHead && inAPI(req) && r.status == http.StatusOK {
					r.refuse(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
					r.header.Set("Allow", "GET")
				}
			}),
		},
		{
			name: "HEAD without the content type GET sends", rule: "ROUTE-5",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodHead && inAPI(req) {
					r.header.Del("Content-Type")
				}
			}),
		},
		{
			name: "healthz wants a key", rule: "ROUTE-6",
			caught: []string{"GET /healthz needs no key and says how the sandbox is"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/healthz" && req.Header.Get("Authorization") == "" {
					r.refuse(http.StatusUnauthorized, "INVALID_API_KEY")
				}
			}),
		},
		{
			name: "the OpenAPI document counted against a budget", rule: "ROUTE-7",
			caught: []string{"GET /openapi.json needs no key and serves the OpenAPI document, not an envelope"},
			wrap: answers(func(req *http.Request, r *response) {
				if strings.HasPrefix(req.URL.Path, "/openapi.") {
					r.header.Set("X-RateLimit-Limit", "1000")
				}
			}),
		},
		{
			name: "a key in a query echoed percent-encoded", rule: "SHR-12",
			caught: []string{"Every key in an entry appears only as its hint"},
			wrap:   onJournal(),
		},
		{
			name: "a key in a header's name echoed whole", rule: "SHR-12",
			caught: []string{"A key in a header's name or beside another key appears only as its hint"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/requests") {
					r.body = bytes.ReplaceAll(r.body, []byte("x-echo-svc_test_…"), []byte("x-echo-"+strings.ToLower(bearer(req))+"-"))
				}
			}),
		},
	}
}

// onJournal is a deployment whose journal shows a key in a query as it
// came, percent-encoded, without looking for keys in that spelling.
func onJournal() func(http.Handler) http.Handler {
	return answers(func(req *http.Request, r *response) {
		if !isGet(req, "/_sandbox/requests") {
			return
		}
		key := bearer(req)
		r.eachItem(func(it map[string]any) {
			if q := toString(it["query"]); strings.Contains(q, wire.RedactKey(key)) {
				it["query"] = strings.ReplaceAll(q, wire.RedactKey(key), strings.ReplaceAll(key, "_", "%5F"))
			}
		})
	})
}

// firstBreakProofs are the breaks the built-in suite was first proven
// against, area-narrowed; here each runs the whole default run.
func firstBreakProofs() []proof {
	var resets atomic.Int64
	return []proof{
		{
			name: "a new campaign is not a draft", rule: "CMP-3",
			says:   "\"active\"",
			caught: []string{"A new campaign is a draft", "A created campaign can be read back with its details and status"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.data(func(d map[string]any) {
					if d["status"] == "draft" {
						d["status"] = "active"
					}
				})
			}),
		},
		{
			name: "createdAt as a Unix number", rule: "CMP-4",
			says:   "\"data.createdAt\" must be a string, got integer 1763780000",
			caught: []string{"A new campaign is a draft"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.data(func(d map[string]any) {
					if _, ok := d["createdAt"]; ok {
						d["createdAt"] = json.Number("1763780000")
					}
				})
			}),
		},
		{
			name: "no rate-limit headers", rule: "RATE-1",
			says:   "rate-limit rule (spec §8): the header X-RateLimit-Limit is missing",
			caught: []string{"GET /v1/campaigns carries the rate-limit headers as integers", "The remaining count goes down with each request", "The limit in force does not exceed the published limits"},
			wrap: answers(func(_ *http.Request, r *response) {
				for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					r.header.Del(h)
				}
			}),
		},
		{
			name: "X-RateLimit-Remaining not an integer", rule: "RATE-1",
			says:   "must be an integer",
			caught: []string{"GET /v1/testers carries the rate-limit headers as integers"},
			wrap: answers(func(_ *http.Request, r *response) {
				if v := r.header.Get("X-RateLimit-Remaining"); v != "" {
					r.header.Set("X-RateLimit-Remaining", v+".0")
				}
			}),
		},
		{
			name: "a limit above the published maxima", rule: "RATE-2",
			says:   "exceeds the published maximum 1000",
			caught: []string{"The limit in force does not exceed the published limits"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Limit") != "" {
					r.header.Set("X-RateLimit-Limit", "5000")
					r.header.Set("X-RateLimit-Remaining", "4999")
				}
			}),
		},
		{
			name: "X-RateLimit-Remaining above the limit", rule: "RATE-3",
			says:   "exceeds X-RateLimit-Limit",
			caught: []string{"GET /v1/analytics carries the rate-limit headers as integers"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Limit") != "" {
					r.header.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(r.header, "X-RateLimit-Limit")+500))
				}
			}),
		},
		{
			name: "X-RateLimit-Reset far away", rule: "RATE-4",
			says:   "RATE-10 X-RateLimit-Reset is the end of the reported UTC window",
			caught: []string{"The reset time is plausible in every reading of its unit"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Reset") != "" {
					r.header.Set("X-RateLimit-Reset", "1234567")
				}
			}),
		},
		{
			name: "503 instead of 429", rule: "FAULT-13",
			says: "FAULT-13 a planned status fault answers with that status and its code: want 429 RATE_LIMIT_EXCEEDED, got 503",
			// Only a fault's 429: a spent window's own is RATE-5's.
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusTooManyRequests && r.header.Get("X-Sandbox-Fault") != "" {
					r.status = http.StatusServiceUnavailable
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("503") })
				}
			}),
		},
		{
			name: "a rolling window instead of one aligned to the minute", rule: "RATE-6",
			says:   "RATE-10 X-RateLimit-Reset is the end of the reported UTC window",
			caught: []string{"The minute window ends on a whole UTC minute"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Reset") != "" {
					r.header.Set("X-RateLimit-Reset", strconv.FormatInt(offTheMinute(time.Now().Unix()+60), 10))
				}
			}),
		},
		{
			name: "X-RateLimit-Remaining never goes down", rule: "RATE-7",
			says:   "must count down",
			caught: []string{"The remaining count goes down with each request", "Every request counts, several in a row"},
			wrap: answers(func(_ *http.Request, r *response) {
				if v := r.header.Get("X-RateLimit-Limit"); v != "" {
					r.header.Set("X-RateLimit-Remaining", v)
				}
			}),
		},
		{
			name: "the remaining count frozen while the reset moves later", rule: "RATE-7",
			says:   "RATE-10 X-RateLimit-Reset is the end of the reported UTC window",
			caught: []string{"The remaining count goes down with each request"},
			wrap: answers(func(_ *http.Request, r *response) {
				if l := r.header.Get("X-RateLimit-Limit"); l != "" {
					r.header.Set("X-RateLimit-Remaining", l)
					r.header.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Unix()+60+resets.Add(1), 10))
				}
			}),
		},
		{
			name: "POST requests not counted", rule: "RATE-7",
			says:   "RATE-7 a fresh or reset account has its whole window",
			caught: []string{"POST /v1/campaigns uses one unit of the window"},
			wrap: func(next http.Handler) http.Handler {
				var posts perKey
				return breaking(next, nil, func(req *http.Request, r *response) {
					if r.header.Get("X-RateLimit-Remaining") == "" {
						return
					}
					d := 0
					if req.Method == http.MethodPost {
						d = 1
					}
					n := posts.add(bearer(req), d)
					r.header.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(r.header, "X-RateLimit-Remaining")+n))
				})
			},
		},
		{
			name: "429 without Retry-After", rule: "FAULT-14",
			says:   "FAULT-14 an injected answer carries Retry-After as planned",
			caught: []string{"A quick 429 through an injected fault carries Retry-After"},
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusTooManyRequests {
					r.header.Del("Retry-After")
				}
			}),
		},
		{
			name: "default page size 25", rule: "LIST-3",
			says:   "LIST-4 a page holds at most limit items: want at most 20 items, got 25",
			caught: []string{"A list has 20 items a page by default"},
			wrap: asks(func(r *http.Request) {
				if r.Method == http.MethodGet && r.URL.Path == "/v1/campaigns" && r.URL.Query().Get("limit") == "" {
					q := r.URL.Query()
					q.Set("limit", "25")
					r.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "hasMore true on the last page", rule: "LIST-7",
			says:   "hasMore is true but nextCursor is null",
			caught: []string{"Campaigns are walked page by page without loss or repeat, 3 a page", "Testers are walked page by page without loss or repeat, 2 a page"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.data(func(d map[string]any) {
					if d["hasMore"] == false {
						d["hasMore"] = true
					}
				})
			}),
		},
		{
			name: "a cursor that skips an item", rule: "LIST-8",
			says:   "list rule",
			caught: []string{"Campaigns are walked page by page without loss or repeat, 2 a page", "Bugs are walked page by page without loss or repeat", "Testers are walked page by page without loss or repeat, 1 a page"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Query().Get("cursor") != "" {
					r.data(func(d map[string]any) {
						if items, ok := d["items"].([]any); ok && len(items) > 0 {
							d["items"] = items[1:]
						}
					})
				}
			}),
		},
		{
			name: "the platform filter ignored", rule: "LIST-10",
			says:   "filter rule",
			caught: []string{"Campaigns filter by platform = ios alone, exactly", "Lists filter by status and platform together"},
			wrap: asks(func(r *http.Request) {
				if r.URL.Path == "/v1/campaigns" {
					q := r.URL.Query()
					q.Del("platform")
					r.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "a status filter that returns nothing", rule: "LIST-10",
			says:   "filter rule",
			caught: []string{"Bugs filter by status alone, exactly"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/bugs" && req.URL.Query().Get("status") != "" {
					r.data(func(d map[string]any) { d["items"] = []any{} })
				}
			}),
		},
		{
			name: "a severity filter that keeps other severities", rule: "LIST-10",
			says:   "filter rule",
			caught: []string{"Bugs filter by severity low alone, exactly"},
			wrap: asks(func(r *http.Request) {
				if r.URL.Path == "/v1/bugs" && r.URL.Query().Get("severity") == "low" {
					q := r.URL.Query()
					q.Del("severity")
					r.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "a webhook secret that does not sign", rule: "DLV-7",
			says:   "Webhook-Signature",
			caught: []string{"A campaign.created event is delivered, signed with the secret", "A delivery answered with 500 is retried with the same Webhook-Id"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/webhooks" && r.status == http.StatusOK {
					r.data(func(d map[string]any) { d["secret"] = "whsec_not_the_signing_secret" })
				}
			}),
		},
		{
			name: "webhooks registered but never delivered", rule: "DLV-8",
			says:   "WH-5 a write's answer holds exactly the values sent: want url",
			caught: []string{"A campaign.created event is delivered, signed with the secret"},
			wrap: asks(func(r *http.Request) {
				if r.URL.Path == "/v1/webhooks" && r.Method == http.MethodPost {
					rewriteBody(r, func(m map[string]any) {
						if _, ok := m["url"].(string); ok {
							m["url"] = "http://127.0.0.1:9/nobody-listens"
						}
					})
				}
			}),
		},
	}
}
