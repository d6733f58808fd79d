package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/testcampaign/kit/conformance/internal/coverage"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// suiteKey is the operator key of every test run; any svc_test_ key is an
// account in the sandbox.
const suiteKey = "svc_test_conformance_suite_0042"

// serve serves h as the sandbox binary does, its headers bounded alike,
// until the test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.MaxHeaderBytes = httpapi.MaxHeaderBytes
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// runSuite runs the built-in suite, sandbox profile and strict, against h.
func runSuite(t *testing.T, h http.Handler, tags string, exhaustive bool) (*conformance.Report, string) {
	t.Helper()
	srv := serve(t, h)
	var summary bytes.Buffer
	rep, err := conformance.Run(context.Background(), conformance.Config{
		BaseURL:     srv.URL,
		APIKey:      suiteKey,
		Profile:     conformance.ProfileSandbox,
		Tags:        tags,
		Strict:      true,
		Exhaustive:  exhaustive,
		Concurrency: 8,
		Summary:     &summary,
		// The whole default run explores; a run narrowed to where a
		// breakage shows need not.
		Explore: exploreUnlessNarrowed(tags, exhaustive),
		// Generous, so that a busy test machine does not turn slowness
		// into connection errors.
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep, summary.String()
}

func exploreUnlessNarrowed(tags string, exhaustive bool) time.Duration {
	if tags != "" || exhaustive {
		return -1
	}
	return 0
}

func TestBuiltinSuitePassesAgainstSandbox(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts sandboxtest.Options
		// minPassed is how much of the suite must run and pass.
		minPassed int
		// skips are the skip reasons this configuration may give, besides
		// the opt-in @exhaustive.
		skips []string
	}{
		{name: "default flags", minPassed: 250},
		{name: "frozen clock", opts: sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, minPassed: 250},
		{name: "50 requests a minute", opts: sandboxtest.Options{MinuteLimit: 50}, minPassed: 200, skips: []string{"rate limit is 50"}},
		{name: "10 requests a minute", opts: sandboxtest.Options{MinuteLimit: 10}, minPassed: 200, skips: []string{"rate limit is 10"}},
		{name: "two-campaign fixtures", opts: sandboxtest.Options{Fixtures: os.DirFS("testdata/twocampaigns")}, minPassed: 240, skips: []string{"built-in seed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, summary := runSuite(t, sandboxtest.NewHandler(t, tt.opts), "", false)
			for _, s := range append(rep.With(conformance.Failed), rep.With(conformance.Errored)...) {
				t.Errorf("%s (%s) %s: %s", s.Name, s.Location(), s.Status, s.Message)
			}
			if passed := len(rep.With(conformance.Passed)); passed < tt.minPassed {
				t.Errorf("%d scenarios passed, want at least %d", passed, tt.minPassed)
			}
			for _, s := range rep.With(conformance.Skipped) {
				// A count that spans the end of a wall-clock minute cannot be
				// judged, in any configuration: the step says so and skips.
				ok := hasTag(s.Tags, "@exhaustive") || strings.Contains(s.SkipReason, "a rate-limit window ended")
				for _, reason := range tt.skips {
					ok = ok || strings.Contains(s.SkipReason, reason)
				}
				if !ok {
					t.Errorf("%s skipped (%s); this configuration should run it", s.Name, s.SkipReason)
				}
			}
			levels := map[string]bool{}
			for _, s := range rep.Scenarios {
				levels[s.Level] = true
				if s.Maturity == "" {
					t.Errorf("%s (%s) has no maturity tag", s.Name, s.Location())
				}
			}
			for _, l := range []string{conformance.LevelMust, conformance.LevelShould, conformance.LevelSandbox} {
				if !levels[l] {
					t.Errorf("no scenario at level %s", l)
				}
			}
			if tt.name == "default flags" {
				for _, o := range rep.Coverage {
					if o.State == coverage.NotExercised && o.Reason == "" {
						t.Errorf("the default run leaves %s unexercised without a reason", o.Rule.ID)
					}
				}
			}
			if t.Failed() {
				t.Logf("summary:\n%s", summary)
			}
		})
	}
}

func TestExhaustiveScenariosPassWithSmallLimits(t *testing.T) {
	t.Parallel()
	h := sandboxtest.NewHandler(t, sandboxtest.Options{MinuteLimit: 5})
	rep, summary := runSuite(t, h, "@exhaustive", true)
	if got := rep.ExitCode(); got != conformance.ExitConformant {
		t.Fatalf("exit code %d, want %d\n%s", got, conformance.ExitConformant, summary)
	}
	if n := len(rep.With(conformance.Passed)); n < 3 {
		t.Errorf("%d @exhaustive scenarios passed, want at least 3\n%s", n, summary)
	}
}

func hasTag(tags []string, tag string) bool {
	for _, t := range tags {
		if t == tag {
			return true
		}
	}
	return false
}

// response is a sandbox answer on its way back, open to rewriting.
type response struct {
	status int
	header http.Header
	body   []byte
}

// envelope decodes the body as a JSON object (numbers kept exact), lets edit
// change it and encodes it again. Bodies that are not objects are left alone.
func (r *response) envelope(edit func(m map[string]any)) {
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	r.body = b
}

func (r *response) errorObject(edit func(e map[string]any)) {
	r.envelope(func(m map[string]any) {
		if e, ok := m["error"].(map[string]any); ok {
			edit(e)
		}
	})
}

func (r *response) data(edit func(d map[string]any)) {
	r.envelope(func(m map[string]any) {
		if d, ok := m["data"].(map[string]any); ok {
			edit(d)
		}
	})
}

// breaking wraps the sandbox like a faulty proxy: before may change the
// request, after the response. A network fault passes through it as the
// sandbox makes it.
func breaking(next http.Handler, before func(*http.Request), after func(*http.Request, *response)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before != nil {
			before(r)
		}
		rec := &passingRecorder{ResponseRecorder: httptest.NewRecorder(), client: w}
		next.ServeHTTP(rec, r)
		if rec.hijacked {
			return
		}
		res := &response{status: rec.Code, header: rec.Header().Clone(), body: rec.Body.Bytes()}
		if after != nil {
			after(r, res)
		}
		res.header.Del("Content-Length")
		for k, v := range res.header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.status)
		_, _ = w.Write(res.body)
	})
}

// versionRe matches a version prefix other than the one the proxy forces.
var versionRe = regexp.MustCompile(`^/v[0-9]+`)

// resetBump makes every faked reset time later than the one before.
var resetBump atomic.Int64

// uncountedPosts is, per key, how many POSTs a broken deployment has left
// out of its count.
var uncountedPosts sync.Map

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// rewriteBody lets edit change a JSON object request body.
func rewriteBody(r *http.Request, edit func(map[string]any)) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		edit(m)
		b, _ = json.Marshal(m)
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
}

func intHeader(h http.Header, name string) int {
	n, _ := strconv.Atoi(h.Get(name))
	return n
}

func TestBreakagesAreCaught(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   sandboxtest.Options
		tags   string // narrows the run to where the breakage shows
		before func(*http.Request)
		after  func(*http.Request, *response)
		caught []string // scenarios that must be among the failed
		// rule is text the failure message must contain. A break that a
		// rule of every response or the model sees fails the step that
		// sent the exchange, so the row names that rule, not a check the
		// scenario would have made later.
		rule string
	}{
		{
			name: "success is the string \"true\"",
			after: func(_ *http.Request, r *response) {
				r.envelope(func(m map[string]any) {
					if m["success"] == true {
						m["success"] = "true"
					}
				})
			},
			caught: []string{"GET /v1/campaigns answers in the envelope", "GET /v1/analytics succeeds with data as an object", "A new campaign is a draft"},
			rule:   `envelope rule (spec §4): "success" must be a boolean`,
		},
		{
			name: "error.status differs from the HTTP status",
			after: func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) { e["status"] = json.Number("400") })
			},
			caught: []string{"An error repeats its HTTP status and carries a code and a message", "GET /v1/campaigns/cmp_conform_no_such answers in the envelope", "GET /v1/testers rejects an invalid key with 401 INVALID_API_KEY"},
			rule:   `"error.status" must repeat the HTTP status`,
		},
		{
			name: "error.status is a string",
			after: func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) { e["status"] = strconv.Itoa(r.status) })
			},
			caught: []string{"A refused request answers with the error envelope", "An error repeats its HTTP status and carries a code and a message"},
			rule:   `"error.status" must be an integer`,
		},
		{
			name:   "error.message is missing",
			after:  func(_ *http.Request, r *response) { r.errorObject(func(e map[string]any) { delete(e, "message") }) },
			caught: []string{"A refused request answers with the error envelope", "POST /v1/webhooks answers in the envelope"},
			rule:   `"error.message" must be a string`,
		},
		{
			name: "success is left out of failures",
			after: func(_ *http.Request, r *response) {
				r.envelope(func(m map[string]any) {
					if m["success"] == false {
						delete(m, "success")
					}
				})
			},
			caught: []string{"A refused request answers with the error envelope", "PATCH /v1/bugs/bug_conform_no_such answers in the envelope"},
			rule:   `"success" is missing`,
		},
		{
			name: "data is an array",
			after: func(_ *http.Request, r *response) {
				r.envelope(func(m map[string]any) {
					if d, ok := m["data"]; ok {
						m["data"] = []any{d}
					}
				})
			},
			caught: []string{"GET /v1/bugs succeeds with data as an object", "GET /v1/testers answers in the envelope"},
			rule:   `"data" must be an object`,
		},
		{
			name:   "text/plain content type",
			after:  func(_ *http.Request, r *response) { r.header.Set("Content-Type", "text/plain; charset=utf-8") },
			caught: []string{"GET /v1/campaigns answers with a JSON content type", "Errors answer with a JSON content type"},
			rule:   "want Content-Type application/json",
		},
		{
			name: "200 for a request without a key",
			before: func(r *http.Request) {
				if r.Header.Get("Authorization") == "" {
					r.Header.Set("Authorization", "Bearer svc_test_injected_by_proxy")
				}
			},
			caught: []string{"GET /v1/campaigns refuses a request without credentials", "GET /v1/bugs refuses a request without credentials", "GET /v1/analytics refuses a request without credentials"},
			rule:   "want a refusal",
		},
		{
			name: "401 without INVALID_API_KEY",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusUnauthorized {
					r.errorObject(func(e map[string]any) { e["code"] = "UNAUTHORIZED" })
				}
			},
			caught: []string{"GET /v1/bugs rejects an invalid key with 401 INVALID_API_KEY", "An error repeats its HTTP status and carries a code and a message"},
			rule:   `"UNAUTHORIZED" is not one of the sandbox's codes`,
		},
		{
			name: "403 for an invalid key",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusUnauthorized {
					r.status = http.StatusForbidden
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("403") })
				}
			},
			caught: []string{"PATCH /v1/bugs/bug_conform_no_such rejects an invalid key with 401 INVALID_API_KEY"},
			rule:   "INVALID_API_KEY comes with HTTP 401, got HTTP 403",
		},
		{
			name:   "no WWW-Authenticate on 401",
			after:  func(_ *http.Request, r *response) { r.header.Del("WWW-Authenticate") },
			caught: []string{"A 401 from GET /v1/campaigns names the Bearer scheme in WWW-Authenticate"},
			rule:   "WWW-Authenticate is missing",
		},
		{
			name: "lower-case scheme refused",
			before: func(r *http.Request) {
				if strings.HasPrefix(r.Header.Get("Authorization"), "bearer ") {
					r.Header.Set("Authorization", "Bearer not_a_key")
				}
			},
			caught: []string{"The scheme word is case-insensitive"},
			rule:   "want HTTP status 200, got 401",
		},
		{
			name: "500 instead of 400 for malformed JSON",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusBadRequest && bytes.Contains(r.body, []byte("INVALID_JSON")) {
					r.status = http.StatusInternalServerError
					r.errorObject(func(e map[string]any) {
						e["status"], e["code"] = json.Number("500"), "INTERNAL_ERROR"
					})
				}
			},
			caught: []string{"Malformed JSON is a client error, not a server error", "Registering with malformed JSON is a client error"},
			rule:   "want 400 INVALID_JSON, got 500 INTERNAL_ERROR",
		},
		{
			name: "200 for an unknown id",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusNotFound {
					r.status, r.body = http.StatusOK, []byte(`{"success": true, "data": {}}`)
				}
			},
			caught: []string{"An unknown campaign id is 404", "An unknown bug id is 404"},
			rule:   "want HTTP status 404, got 200",
		},
		{
			name: "a new campaign is not a draft",
			after: func(_ *http.Request, r *response) {
				r.data(func(d map[string]any) {
					if d["status"] == "draft" {
						d["status"] = "active"
					}
				})
			},
			caught: []string{"A new campaign is a draft", "A created campaign can be read back with its details and status"},
			rule:   `"active"`,
		},
		{
			name: "createdAt as a Unix number",
			after: func(_ *http.Request, r *response) {
				r.data(func(d map[string]any) {
					if _, ok := d["createdAt"]; ok {
						d["createdAt"] = json.Number("1763780000")
					}
				})
			},
			caught: []string{"A new campaign is a draft"},
			rule:   `"data.createdAt" must be a string, got integer 1763780000`,
		},
		{
			name: "the /v1 prefix is ignored",
			before: func(r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, "/v1/") && !strings.HasPrefix(r.URL.Path, "/_sandbox/") {
					r.URL.Path = "/v1" + versionRe.ReplaceAllString(r.URL.Path, "")
				}
			},
			caught: []string{"The version prefix is not optional: /campaigns", "The version prefix is not optional: /v2/campaigns"},
			rule:   "want a refusal",
		},
		{
			name: "no rate-limit headers",
			after: func(_ *http.Request, r *response) {
				for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					r.header.Del(h)
				}
			},
			caught: []string{"GET /v1/campaigns carries the rate-limit headers as integers", "The remaining count goes down with each request", "The limit in force does not exceed the published limits"},
			rule:   "rate-limit rule (spec §8): the header X-RateLimit-Limit is missing",
		},
		{
			name: "X-RateLimit-Remaining is not an integer",
			after: func(_ *http.Request, r *response) {
				if v := r.header.Get("X-RateLimit-Remaining"); v != "" {
					r.header.Set("X-RateLimit-Remaining", v+".0")
				}
			},
			caught: []string{"GET /v1/testers carries the rate-limit headers as integers"},
			rule:   "must be an integer",
		},
		{
			name: "X-RateLimit-Remaining never goes down",
			after: func(_ *http.Request, r *response) {
				if v := r.header.Get("X-RateLimit-Limit"); v != "" {
					r.header.Set("X-RateLimit-Remaining", v)
				}
			},
			caught: []string{"The remaining count goes down with each request", "Every request counts, several in a row"},
			rule:   "must count down",
		},
		{
			name: "X-RateLimit-Remaining above the limit",
			after: func(_ *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Limit") != "" {
					r.header.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(r.header, "X-RateLimit-Limit")+500))
				}
			},
			caught: []string{"GET /v1/analytics carries the rate-limit headers as integers"},
			rule:   "exceeds X-RateLimit-Limit",
		},
		{
			name: "a limit above the published maxima",
			after: func(_ *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Limit") != "" {
					r.header.Set("X-RateLimit-Limit", "5000")
					r.header.Set("X-RateLimit-Remaining", "4999")
				}
			},
			caught: []string{"The limit in force does not exceed the published limits"},
			rule:   "exceeds the published maximum 1000",
		},
		{
			name: "X-RateLimit-Reset far away",
			after: func(_ *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Reset") != "" {
					r.header.Set("X-RateLimit-Reset", "1234567")
				}
			},
			caught: []string{"The reset time is plausible in every reading of its unit"},
			rule:   "RATE-10 X-RateLimit-Reset is the end of the reported UTC window",
		},
		{
			name: "WWW-Authenticate only on GET",
			after: func(req *http.Request, r *response) {
				if r.status == http.StatusUnauthorized && req.Method != http.MethodGet {
					r.header.Del("WWW-Authenticate")
				}
			},
			caught: []string{"A 401 from POST /v1/campaigns names the Bearer scheme in WWW-Authenticate", "A 401 from PATCH /v1/bugs/bug_conform_no_such names the Bearer scheme in WWW-Authenticate"},
			rule:   "WWW-Authenticate is missing",
		},
		{
			name: "live keys accepted on PATCH",
			tags: "@auth",
			before: func(r *http.Request) {
				if r.Method == http.MethodPatch && strings.Contains(r.Header.Get("Authorization"), "svc_live_") {
					r.Header.Set("Authorization", "Bearer svc_test_live_let_through")
				}
			},
			caught: []string{"The sandbox refuses a live key on PATCH /v1/bugs/bug_conform_no_such, without echoing it"},
			rule:   "want HTTP status 401, got",
		},
		{
			name: "the key echoed by one endpoint",
			after: func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/testers" && r.status == http.StatusUnauthorized {
					r.errorObject(func(e map[string]any) { e["message"] = "bad key " + bearer(req) })
				}
			},
			caught: []string{"GET /v1/testers rejects an invalid key with 401 INVALID_API_KEY"},
			rule:   "a key is never echoed whole",
		},
		{
			name: "the secret echoed without its prefix",
			after: func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/bugs" && r.status == http.StatusUnauthorized {
					r.errorObject(func(e map[string]any) {
						e["message"] = "unknown secret " + strings.TrimPrefix(bearer(req), "svc_test_")
					})
				}
			},
			caught: []string{"GET /v1/bugs rejects an invalid key with 401 INVALID_API_KEY"},
			rule:   "a key is never echoed whole",
		},
		{
			name: "the operator's key echoed in a header",
			after: func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/analytics" {
					r.header.Set("X-Seen-Key", bearer(req))
				}
			},
			caught: []string{"Reading analytics succeeds"},
			rule:   "a key is never echoed whole",
		},
		{
			name: "error.status wrong only on 405",
			tags: "@errors",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusMethodNotAllowed {
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("400") })
				}
			},
			caught: []string{"A wrong method is 405 METHOD_NOT_ALLOWED with Allow"},
			rule:   `"error.status" must repeat the HTTP status 405`,
		},
		{
			name: "HTML on 404",
			tags: "@errors",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusNotFound {
					r.header.Set("Content-Type", "text/html")
				}
			},
			caught: []string{"An unknown id is 404 NOT_FOUND", "An unknown route is 404 NOT_FOUND"},
			rule:   "every response is JSON with a JSON content type",
		},
		{
			name: "default page size 25",
			tags: "@campaigns",
			before: func(r *http.Request) {
				if r.Method == http.MethodGet && r.URL.Path == "/v1/campaigns" && r.URL.Query().Get("limit") == "" {
					q := r.URL.Query()
					q.Set("limit", "25")
					r.URL.RawQuery = q.Encode()
				}
			},
			caught: []string{"A list has 20 items a page by default"},
			rule:   "LIST-4 a page holds at most limit items: want at most 20 items, got 25",
		},
		{
			name: "a 129-character secret accepted",
			tags: "@auth",
			before: func(r *http.Request) {
				if tok := bearer(r); len(tok) == len("svc_test_")+129 {
					r.Header.Set("Authorization", "Bearer "+tok[:len(tok)-1])
				}
			},
			caught: []string{"A secret of 129 characters is refused"},
			rule:   "want HTTP status 401, got 200",
		},
		{
			name: "timestamps with an offset instead of Z",
			tags: "@campaigns",
			after: func(_ *http.Request, r *response) {
				r.body = []byte(strings.ReplaceAll(string(r.body), `Z"`, `+00:00"`))
			},
			caught: []string{"Timestamps are RFC 3339 in UTC with milliseconds"},
			rule:   "exactly three fractional digits",
		},
		{
			name: "timestamps with trailing zeros trimmed",
			opts: sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
			tags: "@campaigns,@bugs",
			after: func(_ *http.Request, r *response) {
				r.body = []byte(strings.ReplaceAll(string(r.body), `.000Z"`, `Z"`))
			},
			caught: []string{"Timestamps are RFC 3339 in UTC with milliseconds", "Bug timestamps are RFC 3339 in UTC with milliseconds"},
			rule:   "exactly three fractional digits",
		},
		{
			name: "trimmed timestamps only in PATCH answers",
			opts: sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
			tags: "@bugs",
			after: func(req *http.Request, r *response) {
				if req.Method == http.MethodPatch {
					r.body = []byte(strings.ReplaceAll(string(r.body), `.000Z"`, `Z"`))
				}
			},
			caught: []string{"A bug moves from new to confirmed", "Every resolution is accepted: fixed"},
			rule:   "every timestamp is RFC 3339 UTC with three fractional digits",
		},
		{
			name: "a cursor that skips an item",
			tags: "@campaigns,@bugs,@testers",
			after: func(req *http.Request, r *response) {
				if req.URL.Query().Get("cursor") != "" {
					r.data(func(d map[string]any) {
						if items, ok := d["items"].([]any); ok && len(items) > 0 {
							d["items"] = items[1:]
						}
					})
				}
			},
			caught: []string{"Campaigns are walked page by page without loss or repeat, 2 a page", "Bugs are walked page by page without loss or repeat", "Testers are walked page by page without loss or repeat, 1 a page"},
			rule:   "list rule",
		},
		{
			name: "hasMore true on the last page",
			tags: "@campaigns,@testers",
			after: func(_ *http.Request, r *response) {
				r.data(func(d map[string]any) {
					if d["hasMore"] == false {
						d["hasMore"] = true
					}
				})
			},
			caught: []string{"Campaigns are walked page by page without loss or repeat, 3 a page", "Testers are walked page by page without loss or repeat, 2 a page"},
			rule:   "hasMore is true but nextCursor is null",
		},
		{
			name: "the platform filter ignored",
			tags: "@campaigns",
			before: func(r *http.Request) {
				if r.URL.Path == "/v1/campaigns" {
					q := r.URL.Query()
					q.Del("platform")
					r.URL.RawQuery = q.Encode()
				}
			},
			caught: []string{"Campaigns filter by platform = ios alone, exactly", "Lists filter by status and platform together"},
			rule:   "filter rule",
		},
		{
			name: "a status filter that returns nothing",
			tags: "@bugs",
			after: func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/bugs" && req.URL.Query().Get("status") != "" {
					r.data(func(d map[string]any) { d["items"] = []any{} })
				}
			},
			caught: []string{"Bugs filter by status alone, exactly"},
			rule:   "filter rule",
		},
		{
			name: "a severity filter that keeps other severities",
			tags: "@bugs",
			before: func(r *http.Request) {
				if r.URL.Path == "/v1/bugs" && r.URL.Query().Get("severity") == "low" {
					q := r.URL.Query()
					q.Del("severity")
					r.URL.RawQuery = q.Encode()
				}
			},
			caught: []string{"Bugs filter by severity low alone, exactly"},
			rule:   "filter rule",
		},
		{
			name: "429 without Retry-After",
			tags: "@ratelimit && ~@exhaustive",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusTooManyRequests {
					r.header.Del("Retry-After")
				}
			},
			caught: []string{"A quick 429 through an injected fault carries Retry-After"},
			rule:   "FAULT-14 an injected answer carries Retry-After as planned",
		},
		{
			name: "the remaining count frozen while the reset moves later",
			after: func(_ *http.Request, r *response) {
				if l := r.header.Get("X-RateLimit-Limit"); l != "" {
					r.header.Set("X-RateLimit-Remaining", l)
					r.header.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Unix()+60+int64(resetBump.Add(1)), 10))
				}
			},
			caught: []string{"The remaining count goes down with each request"},
			rule:   "RATE-10 X-RateLimit-Reset is the end of the reported UTC window",
		},
		{
			name: "a webhook secret that does not sign",
			tags: "@webhooks",
			after: func(req *http.Request, r *response) {
				if req.URL.Path == "/v1/webhooks" && r.status == http.StatusOK {
					r.data(func(d map[string]any) { d["secret"] = "whsec_not_the_signing_secret" })
				}
			},
			caught: []string{"A campaign.created event is delivered, signed with the secret", "A delivery answered with 500 is retried with the same Webhook-Id"},
			rule:   "Webhook-Signature",
		},
		{
			name: "every event delivered whatever the subscription",
			tags: "@webhooks",
			before: func(r *http.Request) {
				if r.URL.Path == "/v1/webhooks" && r.Method == http.MethodPost {
					rewriteBody(r, func(m map[string]any) { m["events"] = []any{"*"} })
				}
			},
			caught: []string{"Only the subscribed event types are delivered"},
			rule:   "WH-4 a webhook keeps the events sent, each once",
		},
		{
			name: "webhooks registered but never delivered",
			tags: "@webhooks",
			before: func(r *http.Request) {
				if r.URL.Path == "/v1/webhooks" && r.Method == http.MethodPost {
					rewriteBody(r, func(m map[string]any) {
						if _, ok := m["url"].(string); ok {
							m["url"] = "http://127.0.0.1:9/nobody-listens"
						}
					})
				}
			},
			caught: []string{"A campaign.created event is delivered, signed with the secret"},
			rule:   "WH-5 a write's answer holds exactly the values sent: want url",
		},
		{
			name: "POST requests not counted",
			tags: "@ratelimit && ~@exhaustive",
			after: func(req *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Remaining") == "" {
					return
				}
				n, _ := uncountedPosts.LoadOrStore(bearer(req), new(atomic.Int64))
				posts := n.(*atomic.Int64)
				if req.Method == http.MethodPost {
					posts.Add(1)
				}
				r.header.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(r.header, "X-RateLimit-Remaining")+int(posts.Load())))
			},
			caught: []string{"POST /v1/campaigns uses one unit of the window"},
			rule:   "RATE-7 a fresh or reset account has its whole window",
		},
		{
			name: "a rolling window instead of one aligned to the minute",
			tags: "@ratelimit && ~@exhaustive",
			after: func(_ *http.Request, r *response) {
				if r.header.Get("X-RateLimit-Reset") != "" {
					r.header.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Unix()+60, 10))
				}
			},
			caught: []string{"The minute window ends on a whole UTC minute"},
			rule:   "RATE-10 X-RateLimit-Reset is the end of the reported UTC window",
		},
		{
			name: "405 without Allow on one endpoint",
			tags: "@errors",
			after: func(req *http.Request, r *response) {
				if r.status == http.StatusMethodNotAllowed && req.URL.Path == "/v1/testers" {
					r.header.Del("Allow")
				}
			},
			caught: []string{"A wrong method on /v1/testers is 405 METHOD_NOT_ALLOWED, Allow naming GET"},
			rule:   "the header Allow is missing",
		},
		{
			name: "403 without a header on PATCH",
			tags: "@auth",
			after: func(req *http.Request, r *response) {
				if r.status == http.StatusUnauthorized && req.Method == http.MethodPatch && req.Header.Get("Authorization") == "" {
					r.status = http.StatusForbidden
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("403") })
				}
			},
			caught: []string{"The sandbox refuses PATCH /v1/bugs/bug_conform_no_such without a header with 401 INVALID_API_KEY"},
			rule:   "INVALID_API_KEY comes with HTTP 401, got HTTP 403",
		},
		{
			name: "503 instead of 429 over the limit",
			opts: sandboxtest.Options{MinuteLimit: 5},
			tags: "@exhaustive",
			after: func(_ *http.Request, r *response) {
				if r.status == http.StatusTooManyRequests {
					r.status = http.StatusServiceUnavailable
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("503") })
				}
			},
			caught: []string{"Over the limit the answer is 429 in the error envelope", "Over the limit the sandbox answers 429 RATE_LIMIT_EXCEEDED with Retry-After"},
			rule:   "RATE_LIMIT_EXCEEDED comes with HTTP 429, got HTTP 503",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := breaking(sandboxtest.NewHandler(t, tt.opts), tt.before, tt.after)
			// The spec-level suite is what a live deployment faces, and it
			// is what these breakages must not get past.
			tags := tt.tags
			if tags == "" {
				tags = "~@sandbox && ~@exhaustive"
			}
			rep, summary := runSuite(t, h, tags, true)
			if got := rep.ExitCode(); got != conformance.ExitDeviations {
				t.Fatalf("exit code %d, want %d (deviations)\n%s", got, conformance.ExitDeviations, summary)
			}
			failed := map[string]conformance.ScenarioResult{}
			for _, s := range rep.With(conformance.Failed) {
				failed[s.Name] = s
			}
			named := false
			for _, name := range tt.caught {
				s, ok := failed[name]
				if !ok {
					t.Errorf("scenario %q did not fail", name)
					continue
				}
				named = named || strings.Contains(s.Message, tt.rule)
			}
			if !named {
				t.Errorf("no failure of %q says %q", tt.caught, tt.rule)
			}
			if t.Failed() {
				t.Logf("summary:\n%s", summary)
			}
		})
	}
}
