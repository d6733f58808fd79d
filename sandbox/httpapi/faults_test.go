package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// live talks to a sandbox over a real connection, which the network faults
// need: they take the connection over.
type live struct {
	t    *testing.T
	base string
	key  string
}

func newLive(t *testing.T) *live {
	// The tests wait for the sandbox by asking its controls.
	srv := sandboxtest.NewServer(t, sandboxtest.Options{ControlMinuteLimit: 1 << 20})
	return &live{t: t, base: srv.URL, key: testKey}
}

// send sends one request on a connection of its own, so that a fault that
// breaks it breaks nothing else.
func (l *live) send(ctx context.Context, method, path, body string, headers ...string) (*http.Response, []byte, error) {
	l.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, strings.NewReader(body))
	if err != nil {
		l.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res, raw, err
}

// data sends a request that must succeed and decodes its data into out.
func (l *live) data(method, path, body string, out any) {
	l.t.Helper()
	res, raw, err := l.send(context.Background(), method, path, body)
	if err != nil || res.StatusCode != http.StatusOK {
		l.t.Fatalf("%s %s: %v %s", method, path, err, raw)
	}
	var env struct{ Data json.RawMessage }
	if err := json.Unmarshal(raw, &env); err != nil {
		l.t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			l.t.Fatalf("%s %s: decode data: %v", method, path, err)
		}
	}
}

type journalEntry struct {
	Method        string              `json:"method"`
	Path          string              `json:"path"`
	Query         string              `json:"query"`
	Headers       map[string][]string `json:"headers"`
	Body          string              `json:"body"`
	BodyBytes     int                 `json:"bodyBytes"`
	BodyTruncated bool                `json:"bodyTruncated"`
	Status        *int                `json:"status"`
	Abandoned     bool                `json:"abandoned"`
	Pending       bool                `json:"pending"`
	Fault         *struct {
		ID      string `json:"id"`
		Network string `json:"network"`
		Status  int    `json:"status"`
	} `json:"fault"`
}

func (l *live) journal(query string) []journalEntry {
	l.t.Helper()
	var page struct{ Items []journalEntry }
	l.data("GET", "/_sandbox/requests"+query, "", &page)
	return page.Items
}

func TestJournalShowsWhatTheClientSentWithTheKeyRedacted(t *testing.T) {
	l := newLive(t)
	l.data("GET", "/v1/campaigns?limit=2", "", nil)
	body := `{"name":"Journal","platform":"web","testersRequired":2,"rewardPerBug":19.99}`
	l.send(context.Background(), "POST", "/v1/campaigns", body, "User-Agent", "acme-sdk/1.2.3", "X-Request-Id", "req-1", "Referer", "https://example.com/?key="+testKey)

	got := l.journal("?method=POST&path=/v1/campaigns")
	if len(got) != 1 {
		t.Fatalf("%d journal entries for POST /v1/campaigns, want 1: %+v", len(got), got)
	}
	e := got[0]
	if e.Body != body || e.BodyBytes != len(body) || e.BodyTruncated {
		t.Errorf("body %q (%d bytes, cut %v), want %q as sent", e.Body, e.BodyBytes, e.BodyTruncated, body)
	}
	for name, want := range map[string]string{
		"User-Agent": "acme-sdk/1.2.3", "X-Request-Id": "req-1", "Content-Type": "application/json",
		"Authorization": "Bearer svc_test_…cdef", "Referer": "https://example.com/?key=svc_test_…cdef",
	} {
		if got := e.Headers[name]; len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if raw, _ := json.Marshal(got); strings.Contains(string(raw), testKey) {
		t.Error("the journal shows the key whole")
	}
	if e.Status == nil || *e.Status != 200 || e.Abandoned || e.Fault != nil {
		t.Errorf("status %v, abandoned %v, fault %v; want 200, answered, no fault", e.Status, e.Abandoned, e.Fault)
	}
	if all := l.journal(""); len(all) != 2 || all[1].Query != "limit=2" {
		t.Errorf("unfiltered journal: %+v, want both requests, newest first", all)
	}
	if gets := l.journal("?path=/v1/camp*&method=GET"); len(gets) != 1 || gets[0].Method != "GET" {
		t.Errorf("GET /v1/camp*: %+v, want the one GET", gets)
	}
}

func TestJournalFiltersAreChecked(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	c.fails("GET", "/_sandbox/requests?method=FETCH", "", http.StatusBadRequest, "INVALID_PARAMETER")
	c.fails("GET", "/_sandbox/requests?path=campaigns", "", http.StatusBadRequest, "INVALID_PARAMETER")
}

func TestAFaultHitsOnlyItsRouteWithAnyStatus(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	c.ok("POST", "/_sandbox/faults", `{"method":"POST","path":"/v1/campaigns","status":503,"retryAfter":7}`, nil)
	c.ok("GET", "/v1/campaigns", "", nil)
	res := c.fails("POST", "/v1/campaigns", validCampaign, http.StatusServiceUnavailable, "INJECTED_FAILURE")
	if res.header.Get("Retry-After") != "7" || res.header.Get("X-Sandbox-Fault") != "flt_000001" {
		t.Errorf("Retry-After %q, X-Sandbox-Fault %q; want 7 and flt_000001", res.header.Get("Retry-After"), res.header.Get("X-Sandbox-Fault"))
	}
	c.ok("POST", "/v1/campaigns", validCampaign, nil)

	c.ok("POST", "/_sandbox/faults", `{"path":"/v1/bugs*","status":404,"count":2}`, nil)
	c.fails("PATCH", "/v1/bugs/bug_000001", `{"status":"confirmed"}`, http.StatusNotFound, "NOT_FOUND")
	var listed page[struct {
		ID    string `json:"id"`
		Count *int   `json:"count"`
		Fired int    `json:"fired"`
	}]
	c.ok("GET", "/_sandbox/faults", "", &listed)
	if len(listed.Items) != 1 || *listed.Items[0].Count != 1 || listed.Items[0].Fired != 1 {
		t.Errorf("faults listed: %+v, want flt_000002 with 1 left after 1 fired", listed.Items)
	}
	var cleared struct{ Cleared int }
	c.ok("DELETE", "/_sandbox/faults", "", &cleared)
	if cleared.Cleared != 1 {
		t.Errorf("cleared %d, want 1", cleared.Cleared)
	}
	c.ok("GET", "/v1/bugs", "", nil)
}

func TestFaultBodiesAreCheckedStrictly(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	for body, fields := range map[string]string{
		`{"stauts":500}`:                                                      "stauts",
		`{"status":101}`:                                                      "status",
		`{"status":300}`:                                                      "status",
		`{"status":302}`:                                                      "headers",
		`{"status":204,"body":""}`:                                            "body",
		`{"status":304,"body":"{}"}`:                                          "body",
		`{"network":"reset","status":500}`:                                    "network",
		`{"network":"teleport"}`:                                              "network",
		`{"path":"v1/campaigns","status":500}`:                                "path",
		`{"path":"/v1/*/bugs","status":500}`:                                  "path",
		`{"status":500,"seed":3}`:                                             "seed",
		`{"status":500,"rate":0}`:                                             "rate",
		`{"delayMs":5,"retryAfter":5}`:                                        "retryAfter",
		`{"status":503,"retryAfter":-1}`:                                      "retryAfter",
		`{"status":503,"retryAfter":"soon"}`:                                  "retryAfter",
		`{"status":503,"retryAfter":1.5}`:                                     "retryAfter",
		`{"status":503,"retryAfer":0}`:                                        "retryAfer",
		`{"status":500,"headers":["X-A"]}`:                                    "headers",
		`{"status":500,"headers":{"X A":"1"}}`:                                "headers",
		`{"status":500,"headers":{"X-A":"1\r\nB: 2"}}`:                        "headers",
		`{"status":500,"headers":{"Content-Length":"1"}}`:                     "headers",
		`{"status":500,"headers":{"keep-alive":"1"}}`:                         "headers",
		`{"status":500,"headers":{"X-Accel-Redirect":"/v1/bugs"}}`:            "headers",
		`{"status":500,"headers":{"x-accel-limit-rate":"1"}}`:                 "headers",
		`{"status":500,"headers":{"X-Sendfile":"/etc/passwd"}}`:               "headers",
		`{"status":500,"headers":{"Access-Control-Allow-Origin":"*"}}`:        "headers",
		`{"status":500,"headers":{"X-A":"1","x-a":"2"}}`:                      "headers",
		`{"status":500,"headers":{"X-` + strings.Repeat("a", 127) + `":"1"}}`: "headers",
		`{"network":"close","body":"x"}`:                                      "body",
		`{"status":500,"body":7}`:                                             "body",
		`{"method":"post","status":500}`:                                      "method",
		`{"network":"truncate","trickleMs":1000}`:                             "trickleMs",
		`{"count":3}`:                                      "status",
		`{"event":"*","webhook":"dupliacte"}`:              "webhook",
		`{"event":"*","webhok":"duplicate"}`:               "webhok",
		`{"webhook":"duplicate"}`:                          "event",
		`{"event":"bug.deleted","webhook":"reorder"}`:      "event",
		`{"event":"*"}`:                                    "webhook",
		`{"event":"*","webhook":"reorder","delayMs":5}`:    "delayMs",
		`{"event":"*","webhook":"duplicate","status":500}`: "status",
		`{"event":"*","delayMs":5,"path":"/v1/campaigns"}`: "path",
	} {
		res := c.fails("POST", "/_sandbox/faults", body, http.StatusBadRequest, "VALIDATION_ERROR")
		if len(res.env.Error.Details) != 1 || res.env.Error.Details[0].Field != fields {
			t.Errorf("%s: details %+v, want one about %s", body, res.env.Error.Details, fields)
		}
	}
	var none page[json.RawMessage]
	c.ok("GET", "/_sandbox/faults", "", &none)
	if len(none.Items) != 0 {
		t.Errorf("refused faults were planned: %s", none.Items)
	}
}

// Every answer a client's error path must handle: Retry-After as seconds
// (0 included), as an HTTP-date, or absent; extra headers; a body that is
// not the envelope. The journal keeps the body of each faulted request.
func TestStatusFaultsAnswerWhatTheyPlan(t *testing.T) {
	l := newLive(t)
	const date = "Wed, 21 Oct 2026 07:28:00 GMT"
	for _, tt := range []struct {
		fault      string
		status     int
		retryAfter []string
		header     [2]string
		body       string
	}{
		{fault: `{"status":429}`, status: 429, retryAfter: []string{"1"}},
		{fault: `{"status":429,"retryAfter":0}`, status: 429, retryAfter: []string{"0"}},
		{fault: `{"status":503,"retryAfter":"` + date + `"}`, status: 503, retryAfter: []string{date}},
		{fault: `{"status":503,"retryAfter":null}`, status: 503},
		{fault: `{"status":502,"retryAfter":120}`, status: 502, retryAfter: []string{"120"}},
		{fault: `{"status":500,"headers":{"x-request-id":"req_42","Content-Type":"text/html"},"body":"<h1>down</h1>"}`,
			status: 500, header: [2]string{"X-Request-Id", "req_42"}, body: "<h1>down</h1>"},
		{fault: `{"status":400,"body":"{\"message\":\"not ours\"}"}`, status: 400, body: `{"message":"not ours"}`},
	} {
		l.data("POST", "/_sandbox/faults", tt.fault, nil)
		const sent = `{"name":"Faulted","platform":"web","testersRequired":1,"rewardPerBug":1}`
		res, raw, err := l.send(context.Background(), "POST", "/v1/campaigns", sent)
		if err != nil {
			t.Fatalf("%s: %v", tt.fault, err)
		}
		if res.StatusCode != tt.status || !slices.Equal(res.Header.Values("Retry-After"), tt.retryAfter) {
			t.Errorf("%s: %d, Retry-After %q; want %d, %q", tt.fault, res.StatusCode, res.Header.Values("Retry-After"), tt.status, tt.retryAfter)
		}
		if tt.header[0] != "" && res.Header.Get(tt.header[0]) != tt.header[1] {
			t.Errorf("%s: %s = %q, want %q", tt.fault, tt.header[0], res.Header.Get(tt.header[0]), tt.header[1])
		}
		if tt.body != "" && string(raw) != tt.body {
			t.Errorf("%s: body %q, want %q", tt.fault, raw, tt.body)
		}
		if tt.body == "" && !strings.Contains(string(raw), `"success":false`) {
			t.Errorf("%s: body %q, want the error envelope", tt.fault, raw)
		}
		if got := l.journal(""); len(got) == 0 || got[0].Body != sent || got[0].BodyBytes != len(sent) {
			t.Errorf("%s: the journal kept %+v, want the body sent", tt.fault, got)
		}
	}
}

func TestNetworkFaultsAndWhatTheJournalSays(t *testing.T) {
	l := newLive(t)
	for i, tt := range []struct {
		network string
		// check says what the client must see.
		check      func(res *http.Response, body []byte, err error) string
		wantStatus int
	}{
		{"reset", func(_ *http.Response, _ []byte, err error) string {
			if !errors.Is(err, syscall.ECONNRESET) {
				return "want a connection reset"
			}
			return ""
		}, 0},
		{"close", func(_ *http.Response, _ []byte, err error) string {
			if err == nil || !errors.Is(err, io.EOF) {
				return "want the connection closed without an answer"
			}
			return ""
		}, 0},
		{"truncate", func(res *http.Response, body []byte, err error) string {
			if res == nil || !errors.Is(err, io.ErrUnexpectedEOF) || int64(len(body)) >= res.ContentLength {
				return "want fewer bytes than Content-Length promised"
			}
			return ""
		}, 200},
		{"malformed", func(res *http.Response, body []byte, err error) string {
			if err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || json.Valid(body) {
				return "want a 200 claiming JSON with a body that is not"
			}
			return ""
		}, 200},
		{"trickle", func(res *http.Response, body []byte, err error) string {
			if err != nil || res.StatusCode != 200 || !json.Valid(body) {
				return "want the whole answer, slowly"
			}
			return ""
		}, 200},
	} {
		t.Run(tt.network, func(t *testing.T) {
			fault := `{"method":"GET","path":"/v1/testers","network":"` + tt.network + `"}`
			if tt.network == "trickle" {
				fault = `{"method":"GET","path":"/v1/testers","network":"trickle","trickleMs":20}`
			}
			l.data("POST", "/_sandbox/faults", fault, nil)
			res, body, err := l.send(context.Background(), "GET", "/v1/testers", "")
			if problem := tt.check(res, body, err); problem != "" {
				t.Errorf("%s: %s; got %v, %q", tt.network, problem, err, body)
			}
			// The sandbox logs a request once its handler returns, which
			// may be after the client saw the connection fail.
			var entries []journalEntry
			for len(entries) <= i {
				entries = l.journal("?path=/v1/testers")
			}
			got := entries[0]
			if got.Fault == nil || got.Fault.Network != tt.network {
				t.Errorf("journal fault %+v, want the %s fault", got.Fault, tt.network)
			}
			if status := 0; got.Status != nil {
				status = *got.Status
				if status != tt.wantStatus {
					t.Errorf("journal status %d, want %d", status, tt.wantStatus)
				}
			} else if tt.wantStatus != 0 {
				t.Errorf("journal status null, want %d", tt.wantStatus)
			}
			if got.Abandoned {
				t.Error("journal says the client went away; the sandbox did")
			}
		})
	}
	// Only the requests the API answered spent the /v1 budget: the
	// truncated, the trickled, and this one.
	res, _, err := l.send(context.Background(), "GET", "/v1/campaigns", "")
	if err != nil || res.Header.Get("X-RateLimit-Remaining") != "997" {
		t.Errorf("remaining %q after 3 answered requests, want 997 (%v)", res.Header.Get("X-RateLimit-Remaining"), err)
	}
}

func TestAnAbandonedRequestHasNoStatus(t *testing.T) {
	l := newLive(t)
	l.data("POST", "/_sandbox/faults", `{"delayMs":30000,"count":2}`, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := l.send(ctx, "GET", "/v1/campaigns", "")
		done <- err
	}()
	// The request is in its delay once the journal shows the fault that
	// hit it, while the request is still pending.
	for {
		entries := l.journal("")
		if len(entries) == 1 && entries[0].Fault != nil {
			if !entries[0].Pending || entries[0].Status != nil {
				t.Fatalf("a request in its delay is logged as %+v, want pending with no status", entries[0])
			}
			break
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the client's request ended with %v, want its cancellation", err)
	}
	// The entry was kept as the request arrived, and is completed in place
	// once the server has seen the client go.
	entries := l.journal("")
	for len(entries) == 1 && entries[0].Pending {
		entries = l.journal("")
	}
	if len(entries) != 1 {
		t.Fatalf("the journal holds %d entries, want the abandoned one", len(entries))
	}
	if e := entries[0]; e.Status != nil || !e.Abandoned || e.Fault == nil {
		t.Errorf("abandoned request logged with status %v, abandoned %v, fault %v; want no status, abandoned, the fault", e.Status, e.Abandoned, e.Fault)
	}
}

// A request that a network fault dropped is listed before the retry that
// followed it, complete, whatever order their handlers returned in.
func TestTheJournalListsRequestsInTheOrderTheyArrived(t *testing.T) {
	l := newLive(t)
	for range 20 {
		l.data("POST", "/_sandbox/reset", "", nil)
		l.data("POST", "/_sandbox/faults", `{"network":"close"}`, nil)
		if _, _, err := l.send(context.Background(), "GET", "/v1/campaigns", ""); err == nil {
			t.Fatal("a closed connection gave an answer")
		}
		l.send(context.Background(), "GET", "/v1/campaigns", "")
		got := l.journal("")
		if len(got) != 2 || got[0].Status == nil || *got[0].Status != 200 || got[1].Status != nil || got[1].Fault == nil || got[1].Pending {
			t.Fatalf("journal, newest first: %+v; want the retry's 200, then the dropped request complete with its fault", got)
		}
	}
}

// The journal is paged with limit and cursor as other lists are, and counts
// the requests that match its filters.
func TestTheJournalPagesAndCounts(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	for range 5 {
		c.ok("GET", "/v1/testers", "", nil)
	}
	c.ok("GET", "/v1/campaigns", "", nil)
	var first, second page[struct{ Path string }]
	c.ok("GET", "/_sandbox/requests?path=/v1/testers&limit=3", "", &first)
	if len(first.Items) != 3 || !first.HasMore || first.NextCursor == nil {
		t.Fatalf("first page: %+v, want 3 of 5 and a cursor", first)
	}
	c.ok("GET", "/_sandbox/requests?path=/v1/testers&limit=3&cursor="+*first.NextCursor, "", &second)
	if len(second.Items) != 2 || second.HasMore || second.NextCursor != nil {
		t.Errorf("second page: %+v, want the last 2 and no cursor", second)
	}
	for _, tt := range []struct {
		query string
		want  int
	}{{"?count=true", 6}, {"?path=/v1/testers&count=true", 5}, {"?method=GET&path=/v1/campaigns&count=true", 1}, {"?method=POST&count=true", 0}} {
		var counted struct{ Count *int }
		c.ok("GET", "/_sandbox/requests"+tt.query, "", &counted)
		if counted.Count == nil || *counted.Count != tt.want {
			t.Errorf("%s count: %v, want %d", tt.query, counted.Count, tt.want)
		}
	}
	c.fails("GET", "/_sandbox/requests?limit=0", "", http.StatusBadRequest, "INVALID_PARAMETER")
	c.fails("GET", "/_sandbox/requests?count=yes", "", http.StatusBadRequest, "INVALID_PARAMETER")
}

// A request answered after its delay is answered at the end of it: its Date
// is then, on the account's clock, and its rate-limit headers describe the
// window of then, so that a client comparing X-RateLimit-Reset with Date
// sees one time (CLK-6). The clock is moved while the request waits. So is
// a status answered in the API's place after the write and a delay.
func TestADelayedAnswerIsDatedWhenItIsAnswered(t *testing.T) {
	for _, tc := range []struct{ name, fault string }{
		{"delay before the write", `{"method":"GET","path":"/v1/testers","delayMs":30000}`},
		{"status after the write and a delay", `{"method":"GET","path":"/v1/testers","delayMs":30000,"phase":"after","status":503}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
			sb := sandboxtest.New(t, sandboxtest.Options{Now: arrived})
			c := &client{t: t, handler: sb.Handler, key: testKey}
			c.ok("POST", "/_sandbox/faults", tc.fault, nil)
			answered := make(chan *httptest.ResponseRecorder)
			go func() {
				req := httptest.NewRequest("GET", "/v1/testers", nil)
				req.Header.Set("Authorization", "Bearer "+testKey)
				rec := httptest.NewRecorder()
				sb.Handler.ServeHTTP(rec, req)
				answered <- rec
			}()
			// The request is in its delay once the journal shows the fault
			// that hit it while the request is pending.
			for {
				var entries page[journalEntry]
				c.ok("GET", "/_sandbox/requests?path=/v1/testers", "", &entries)
				if len(entries.Items) == 1 && entries.Items[0].Fault != nil && entries.Items[0].Pending {
					break
				}
			}
			c.ok("POST", "/_sandbox/clock", `{"advance":"1h"}`, nil)
			sb.EndDelays()
			rec := <-answered
			wantDate := arrived.Add(time.Hour)
			if got := rec.Header().Get("Date"); got != wantDate.Format(http.TimeFormat) {
				t.Errorf("Date %q, want %q, the end of the delay", got, wantDate.Format(http.TimeFormat))
			}
			if got, want := rec.Header().Get("X-RateLimit-Reset"), strconv.FormatInt(wantDate.Truncate(time.Minute).Add(time.Minute).Unix(), 10); got != want {
				t.Errorf("X-RateLimit-Reset %s, want %s, the end of the minute the answer is dated in", got, want)
			}
		})
	}
}

// A key written into a fault's body or headers is shown as its hint in the
// fault list and in the journal, as everywhere the sandbox shows what it was
// sent; the injected answer carries what was planned.
func TestAKeyInAFaultIsShownAsItsHint(t *testing.T) {
	const secret = "svc_test_written-into-a-fault-9876"
	c := newClient(t, sandboxtest.Options{})
	c.ok("POST", "/_sandbox/faults", `{"path":"/v1/testers","status":500,"body":"{\"echo\":\"`+secret+`\"}","headers":{"X-Echo":"`+secret+`"}}`, nil)
	listed := c.do("GET", "/_sandbox/faults", "")
	res := sendWithin(t.Context(), c.handler, testKey, "/v1/testers", "192.0.2.1")
	if res.Code != http.StatusInternalServerError || !strings.Contains(res.Body.String(), secret) || res.Header().Get("X-Echo") != secret {
		t.Errorf("the injected answer: %d %s, want the body and header as planned", res.Code, res.Body)
	}
	journal := c.do("GET", "/_sandbox/requests", "")
	for name, shown := range map[string]string{"the fault list": string(listed.raw), "the journal": string(journal.raw)} {
		if strings.Contains(shown, secret) || !strings.Contains(shown, "svc_test_…9876") {
			t.Errorf("%s shows the key whole, or not as its hint: %s", name, shown)
		}
	}
}
