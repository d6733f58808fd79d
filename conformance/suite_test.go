package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
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
func runSuite(t *testing.T, h http.Handler, tags string, exhaustive bool) (*kit.Report, string) {
	t.Helper()
	srv := serve(t, h)
	var summary bytes.Buffer
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL:     srv.URL,
		APIKey:      suiteKey,
		Profile:     kit.ProfileSandbox,
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
		{name: "frozen clock", opts: frozen, minPassed: 250},
		{name: "50 requests a minute", opts: sandboxtest.Options{MinuteLimit: 50}, minPassed: 200, skips: []string{"rate limit is 50"}},
		{name: "10 requests a minute", opts: sandboxtest.Options{MinuteLimit: 10}, minPassed: 200, skips: []string{"rate limit is 10"}},
		{name: "two-campaign fixtures", opts: sandboxtest.Options{Fixtures: os.DirFS("testdata/twocampaigns")}, minPassed: 240, skips: []string{"built-in seed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, summary := runSuite(t, sandboxtest.NewHandler(t, tt.opts), "", false)
			for _, s := range append(rep.With(kit.Failed), rep.With(kit.Errored)...) {
				t.Errorf("%s (%s) %s: %s", s.Name, s.Location(), s.Status, s.Message)
			}
			if passed := len(rep.With(kit.Passed)); passed < tt.minPassed {
				t.Errorf("%d scenarios passed, want at least %d", passed, tt.minPassed)
			}
			for _, s := range rep.With(kit.Skipped) {
				// A count that spans the end of a wall-clock minute cannot be
				// judged, in any configuration: the step says so and skips.
				ok := slices.Contains(s.Tags, "@exhaustive") || strings.Contains(s.SkipReason, "a rate-limit window ended")
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
			for _, l := range []string{docs.Must, docs.Should, docs.Sandbox} {
				if !levels[l] {
					t.Errorf("no scenario at level %s", l)
				}
			}
			if tt.name == "default flags" {
				for _, o := range rep.Coverage {
					if o.State == kit.NotExercised && o.Reason == "" {
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
	if got := rep.ExitCode(); got != kit.ExitConformant {
		t.Fatalf("exit code %d, want %d\n%s", got, kit.ExitConformant, summary)
	}
	if n := len(rep.With(kit.Passed)); n < 3 {
		t.Errorf("%d @exhaustive scenarios passed, want at least 3\n%s", n, summary)
	}
}

// response is a sandbox answer on its way back, open to rewriting.
type response struct {
	status int
	header http.Header
	body   []byte
}

// envelope lets edit change the body as a JSON object.
func (r *response) envelope(edit func(m map[string]any)) {
	r.body, _ = editObject(r.body, edit)
}

// editObject decodes b as a JSON object (numbers kept exact), lets edit
// change it and encodes it again; it says whether b was an object, and
// leaves it alone when not.
func editObject(b []byte, edit func(m map[string]any)) ([]byte, bool) {
	m, ok := decodeObject(b)
	if !ok {
		return b, false
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return out, true
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

// answers breaks what the sandbox answers; asks breaks what it is asked.
func answers(f func(*http.Request, *response)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return breaking(next, nil, f) }
}

func asks(f func(*http.Request)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return breaking(next, f, nil) }
}

// versionRe matches a version prefix other than the one the proxy forces.
var versionRe = regexp.MustCompile(`^/v[0-9]+`)

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// rewriteBody lets edit change a JSON object request body.
func rewriteBody(r *http.Request, edit func(map[string]any)) {
	rewriteRaw(r, func(b []byte) []byte {
		// A body edit leaves alone did not cross the breaker: re-encoded, it
		// would lose its number spellings, repeated fields and size, each a
		// rule of its own. Numbers stay json.Number, spelt as sent.
		m, ok := decodeObject(b)
		if !ok {
			return b
		}
		edit(m)
		if sent, _ := decodeObject(b); reflect.DeepEqual(sent, m) {
			return b
		}
		out, _ := json.Marshal(m)
		return out
	})
}

// rewriteRaw lets edit change a request body as bytes.
func rewriteRaw(r *http.Request, edit func([]byte) []byte) {
	b := edit(keepBody(r))
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
}

// keepBody reads a request's body for a broken deployment and puts it
// back for the sandbox behind it.
func keepBody(r *http.Request) []byte {
	var buf bytes.Buffer
	if r.Body != nil {
		_, _ = buf.ReadFrom(r.Body)
	}
	r.Body = io.NopCloser(bytes.NewReader(buf.Bytes()))
	return buf.Bytes()
}

func decodeObject(b []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	return m, dec.Decode(&m) == nil && m != nil
}

func intHeader(h http.Header, name string) int {
	n, _ := strconv.Atoi(h.Get(name))
	return n
}

// offTheMinute moves a rolling window's reset off a whole minute by a
// second: a request sent on one would otherwise get an aligned reset, and
// a proof of a rolling window would hold by the luck of the clock.
func offTheMinute(reset int64) int64 {
	if reset%60 == 0 {
		return reset + 1
	}
	return reset
}
