package httpapi_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// The fuzz targets drive the whole handler, middleware included. Every write
// target resets the account first, so an input fails or passes on its own and
// a failure found by the fuzzer replays under plain go test. Names carry a
// fuzz prefix because the package's other tests share the namespace.

const fuzzKey = "svc_test_fuzz_0123456789"

// fuzzReply is a response whose envelope has passed fuzzCheckEnvelope.
type fuzzReply struct {
	status int
	data   json.RawMessage
	code   string
}

// fuzzSandbox is one in-process sandbox on a frozen clock, so that the same
// requests give the same bytes, with limits no fuzz run can reach.
type fuzzSandbox struct {
	h http.Handler
	// seeded is what a freshly reset account shows.
	seeded map[string]any
	// probes are the responses to fuzzProbes on a freshly reset account.
	probes []json.RawMessage
}

// fuzzProbes are valid writes that each take a new ID from a sequence a
// failed write must not have touched.
var fuzzProbes = []struct{ path, body string }{
	{"/v1/campaigns", `{"name":"Probe","platform":"web","testersRequired":3,"rewardPerBug":4.25}`},
	{"/v1/webhooks", `{"url":"https://example.com/probe","events":["*"]}`},
}

func newFuzzSandbox(f *testing.F) *fuzzSandbox {
	s := &fuzzSandbox{h: sandboxtest.NewHandler(f, sandboxtest.Options{
		MinuteLimit: math.MaxInt32, HourLimit: math.MaxInt32, DayLimit: math.MaxInt32,
		// Every input resets the account first, through the controls.
		ControlMinuteLimit: math.MaxInt32 / (24 * 60),
		Now:                time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC),
	})}
	s.reset(f)
	s.seeded = s.snapshot(f)
	s.probes = s.probe(f)
	return s
}

func (s *fuzzSandbox) do(tb testing.TB, req *http.Request) fuzzReply {
	tb.Helper()
	req.Header.Set("Authorization", "Bearer "+fuzzKey)
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	return fuzzCheckEnvelope(tb, req, rec)
}

func (s *fuzzSandbox) send(tb testing.TB, method, target, contentType string, body []byte) fuzzReply {
	tb.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	return s.do(tb, req)
}

// must sends a request that cannot fail unless the sandbox is broken.
func (s *fuzzSandbox) must(tb testing.TB, method, target, body string) json.RawMessage {
	tb.Helper()
	rep := s.send(tb, method, target, "application/json", []byte(body))
	if rep.status != http.StatusOK {
		tb.Fatalf("%s %s: %d %s", method, target, rep.status, rep.code)
	}
	return rep.data
}

func (s *fuzzSandbox) reset(tb testing.TB) {
	tb.Helper()
	s.must(tb, http.MethodPost, "/_sandbox/reset", "")
}

// snapshot is everything the account lets a client read back, deliveries
// included: a refused write must not reach a webhook either.
func (s *fuzzSandbox) snapshot(tb testing.TB) map[string]any {
	tb.Helper()
	state := map[string]any{}
	for _, path := range []string{"/v1/campaigns?limit=100", "/v1/bugs?limit=100", "/v1/testers?limit=100", "/v1/analytics", "/_sandbox/events?limit=100", "/_sandbox/deliveries?limit=100"} {
		var data any
		if err := json.Unmarshal(s.must(tb, http.MethodGet, path, ""), &data); err != nil {
			tb.Fatalf("GET %s: %v", path, err)
		}
		state[path] = data
	}
	return state
}

func (s *fuzzSandbox) probe(tb testing.TB) []json.RawMessage {
	tb.Helper()
	var replies []json.RawMessage
	for _, p := range fuzzProbes {
		replies = append(replies, s.must(tb, http.MethodPost, p.path, p.body))
	}
	return replies
}

// checkUnchanged fails the test unless the account is as freshly seeded, down
// to the IDs its next writes get.
func (s *fuzzSandbox) checkUnchanged(t *testing.T, what string) {
	t.Helper()
	if diff := cmp.Diff(s.seeded, s.snapshot(t)); diff != "" {
		t.Fatalf("%s failed but changed the account (-before +after):\n%s", what, diff)
	}
	for i, got := range s.probe(t) {
		if !bytes.Equal(got, s.probes[i]) {
			t.Fatalf("%s failed but moved an ID sequence: POST %s now gives\n%s\nwant\n%s", what, fuzzProbes[i].path, got, s.probes[i])
		}
	}
}

// fuzzCheckEnvelope checks what every response promises: JSON, an envelope
// whose success matches the status, error.status equal to the HTTP status,
// and never a 500.
func fuzzCheckEnvelope(tb testing.TB, req *http.Request, rec *httptest.ResponseRecorder) fuzzReply {
	tb.Helper()
	what := req.Method + " " + req.URL.String()
	if rec.Code == http.StatusInternalServerError {
		tb.Fatalf("%s: 500: %s", what, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		tb.Fatalf("%s: %d with Content-Type %q: %q", what, rec.Code, ct, rec.Body)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		tb.Fatalf("%s: %d, body is no JSON object (%v): %q", what, rec.Code, err, rec.Body)
	}
	var success bool
	if err := json.Unmarshal(env["success"], &success); err != nil {
		tb.Fatalf("%s: success is not a boolean: %s", what, rec.Body)
	}
	want := []string{"data", "success"}
	if !success {
		want = []string{"error", "success"}
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) || success != (rec.Code == http.StatusOK) {
		tb.Fatalf("%s: %d with envelope keys %v, success %v: %s", what, rec.Code, keys, success, rec.Body)
	}
	rep := fuzzReply{status: rec.Code, data: env["data"]}
	if success {
		return rep
	}
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Status  int    `json:"status"`
	}
	if err := json.Unmarshal(env["error"], &e); err != nil || e.Code == "" || e.Message == "" || e.Status != rec.Code {
		tb.Fatalf("%s: %d with error %s (%v)", what, rec.Code, env["error"], err)
	}
	rep.code = e.Code
	return rep
}

// fuzzContentTypes seed the Content-Type argument of the write targets.
var fuzzContentTypes = []string{"application/json", "application/json; charset=utf-8", "text/plain", ""}

// fuzzFailedWrite checks a refused write: a status a client can act on, and
// an account left exactly as it was.
func fuzzFailedWrite(t *testing.T, s *fuzzSandbox, what string, rep fuzzReply, statuses ...int) {
	t.Helper()
	if !slices.Contains(statuses, rep.status) {
		t.Fatalf("%s: %d %s, want one of %v", what, rep.status, rep.code, statuses)
	}
	s.checkUnchanged(t, what)
}

func FuzzCreateCampaign(f *testing.F) {
	for i, body := range []string{
		`{"name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99}`,
		`{"name":"Web","platform":"web","testersRequired":10000,"rewardPerBug":1e2,"status":"active","id":"cmp_000001"}`,
		`{"name":"","platform":"tv","testersRequired":0,"rewardPerBug":0.001}`,
		`{"name":"x","platform":"ios","testersRequired":"10"}`,
		`{"name":"x"`, `[]`, ``,
	} {
		f.Add([]byte(body), fuzzContentTypes[i%len(fuzzContentTypes)])
	}
	s := newFuzzSandbox(f)
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		s.reset(t)
		rep := s.send(t, http.MethodPost, "/v1/campaigns", contentType, body)
		if rep.status != http.StatusOK {
			fuzzFailedWrite(t, s, "POST /v1/campaigns", rep, http.StatusBadRequest, http.StatusUnsupportedMediaType)
			return
		}
		var created struct{ ID, Status string }
		if err := json.Unmarshal(rep.data, &created); err != nil || !strings.HasPrefix(created.ID, "cmp_") || created.Status != "draft" {
			t.Fatalf("created %s (%v), want a draft with a cmp_ ID", rep.data, err)
		}
		if got := s.must(t, http.MethodGet, "/v1/campaigns/"+created.ID, ""); !bytes.Equal(got, rep.data) {
			t.Fatalf("GET after create gives\n%s\nwant what the create returned\n%s", got, rep.data)
		}
	})
}

func FuzzUpdateBug(f *testing.F) {
	for i, seed := range []struct{ id, body string }{
		{"bug_000006", `{"status":"confirmed"}`},
		{"bug_000005", `{"status":"resolved","resolution":"fixed"}`},
		{"bug_000003", `{"status":"confirmed"}`},
		{"bug_000001", `{"resolution":"duplicate"}`},
		{"bug_000004", `{"status":"new"}`},
		{"bug_000009", `{"status":"closed"}`},
		{"bug_000002", `{"status":"confirmed","resolution":"fixed"}`},
		{"bug_000007", `{"status":"bogus"}`},
		{"bug_999999", `{"status":"confirmed"}`},
		{"cmp_000001", `{}`},
		{"", `{"status":"confirmed"}`},
		{"bug_000008", `{"status":`},
	} {
		f.Add(seed.id, []byte(seed.body), fuzzContentTypes[i%len(fuzzContentTypes)])
	}
	s := newFuzzSandbox(f)
	f.Fuzz(func(t *testing.T, id string, body []byte, contentType string) {
		s.reset(t)
		what := "PATCH /v1/bugs/" + url.PathEscape(id)
		rep := s.send(t, http.MethodPatch, "/v1/bugs/"+url.PathEscape(id), contentType, body)
		if rep.status != http.StatusOK {
			fuzzFailedWrite(t, s, what, rep, http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType)
			return
		}
		var updated struct{ ID string }
		if err := json.Unmarshal(rep.data, &updated); err != nil || updated.ID != id {
			t.Fatalf("%s returns %s (%v)", what, rep.data, err)
		}
		var listed struct{ Items []json.RawMessage }
		if err := json.Unmarshal(s.must(t, http.MethodGet, "/v1/bugs?limit=100", ""), &listed); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(listed.Items, func(item json.RawMessage) bool { return bytes.Equal(item, rep.data) }) {
			t.Fatalf("%s returns\n%s\nbut the list does not hold that bug", what, rep.data)
		}
	})
}

func FuzzCreateWebhook(f *testing.F) {
	for i, body := range []string{
		`{"url":"https://example.com/hooks","events":["campaign.created","bug.updated"]}`,
		`{"url":"http://localhost:9000/in","events":["*","*"]}`,
		`{"url":"ftp://example.com","events":[]}`,
		`{"url":"https://example.com","events":["bug.deleted"]}`,
		`{"events":["*"]}`, `{"url":null}`, `"x"`, `{`,
	} {
		f.Add([]byte(body), fuzzContentTypes[i%len(fuzzContentTypes)])
	}
	s := newFuzzSandbox(f)
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		s.reset(t)
		rep := s.send(t, http.MethodPost, "/v1/webhooks", contentType, body)
		if rep.status != http.StatusOK {
			fuzzFailedWrite(t, s, "POST /v1/webhooks", rep, http.StatusBadRequest, http.StatusUnsupportedMediaType)
			return
		}
		var created struct {
			ID, URL, Secret, Status string
			Events                  []string
		}
		if err := json.Unmarshal(rep.data, &created); err != nil || !strings.HasPrefix(created.ID, "whk_") ||
			!strings.HasPrefix(created.Secret, "whsec_") || created.Status != "active" || len(created.Events) == 0 {
			t.Fatalf("created %s (%v)", rep.data, err)
		}
	})
}

func FuzzListBugs(f *testing.F) {
	for _, query := range []string{
		"", "limit=1", "limit=100", "limit=0", "limit=101", "limit=x", "cursor=YzEuNw", "cursor=bad", "limit=2&cursor=YzEuNQ",
		"status=new", "status=closed&severity=critical", "severity=urgent", "campaignId=cmp_000003&status=confirmed",
		"testerId=tst_000001", "campaignId=nope", "status=new&status=bogus", "limit=%zz&status=new", "a=1;b=2",
	} {
		f.Add(query)
	}
	s := newFuzzSandbox(f)
	f.Fuzz(func(t *testing.T, query string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/bugs", nil)
		// Set raw, so the handler sees exactly the bytes the fuzzer chose.
		req.URL.RawQuery = query
		rep := s.do(t, req)
		if rep.status != http.StatusOK {
			if rep.status != http.StatusBadRequest || rep.code != "INVALID_PARAMETER" {
				t.Fatalf("GET /v1/bugs?%s: %d %s, want 200 or 400 INVALID_PARAMETER", query, rep.status, rep.code)
			}
			return
		}
		q := req.URL.Query()
		var page struct {
			Items []struct {
				ID, CampaignID, TesterID, Status, Severity string
			}
			HasMore    *bool
			NextCursor *string
		}
		if err := json.Unmarshal(rep.data, &page); err != nil || page.Items == nil || page.HasMore == nil || *page.HasMore != (page.NextCursor != nil) {
			t.Fatalf("GET /v1/bugs?%s: page %s (%v)", query, rep.data, err)
		}
		limit := 20
		if q.Get("limit") != "" {
			limit, _ = strconv.Atoi(q.Get("limit"))
		}
		if len(page.Items) > limit {
			t.Fatalf("GET /v1/bugs?%s: %d items, limit %d", query, len(page.Items), limit)
		}
		for i, b := range page.Items {
			for _, filter := range []struct{ name, value string }{
				{"campaignId", b.CampaignID}, {"testerId", b.TesterID}, {"status", b.Status}, {"severity", b.Severity},
			} {
				if want := q.Get(filter.name); want != "" && want != filter.value {
					t.Fatalf("GET /v1/bugs?%s: item %s has %s %q", query, b.ID, filter.name, filter.value)
				}
			}
			// IDs share one width, so newest first is descending order.
			if i > 0 && page.Items[i-1].ID <= b.ID {
				t.Fatalf("GET /v1/bugs?%s: %s before %s, want newest first", query, page.Items[i-1].ID, b.ID)
			}
		}
	})
}
