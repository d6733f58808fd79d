package clientverdict

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/docs"
	"github.com/testcampaign/kit/sandbox"
)

// TestTraceIsBoundedAndCharged keeps a trace to its last MaxExchanges
// requests, counts those it forgot, and charges the memory budget for
// every slot it fills, never beyond.
func TestTraceIsBoundedAndCharged(t *testing.T) {
	var charged int64
	trace := NewTrace(func(n int64) { charged += n })
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const extra = 5
	for i := 1; i <= MaxExchanges+extra; i++ {
		trace.Observe(Observation{Request: uint64(i), Method: http.MethodGet, Path: "/v1/campaigns", At: at, Answered: at, Arrived: at, Ended: at, Status: http.StatusOK})
	}
	kept, forgotten := trace.snapshot(nil)
	if len(kept) != MaxExchanges || forgotten != extra {
		t.Errorf("kept %d, forgot %d; want %d and %d", len(kept), forgotten, MaxExchanges, extra)
	}
	if kept[0].request != extra+1 || kept[len(kept)-1].request != MaxExchanges+extra {
		t.Errorf("kept requests %d to %d, want the last %d", kept[0].request, kept[len(kept)-1].request, MaxExchanges)
	}
	if trace.slots < MaxExchanges || trace.slots > MaxExchanges*11/10 {
		t.Errorf("the ring has room for %d exchanges, want about %d", trace.slots, MaxExchanges)
	}
	if want := int64(trace.slots)*exchangeBytes + int64(len("/v1/campaigns")) + sharedTextBytes; charged != want {
		t.Errorf("charged %d bytes, want %d", charged, want)
	}
}

// TestExchangesAreJudgedInArrivalOrder: requests that overlap end in
// another order than they arrived, and "the next request" is the next to
// arrive.
func TestExchangesAreJudgedInArrivalOrder(t *testing.T) {
	trace := NewTrace(nil)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range []uint64{2, 1, 3} {
		trace.Observe(Observation{Request: n, Method: http.MethodGet, Path: "/v1/testers", At: at, Answered: at, Arrived: at, Ended: at, Status: http.StatusOK})
	}
	kept, _ := trace.snapshot(nil)
	for i, e := range kept {
		if e.request != uint64(i+1) {
			t.Fatalf("exchange %d is request %d", i, e.request)
		}
	}
}

func TestParseWindow(t *testing.T) {
	for _, tc := range []struct {
		since, after string
		want         Window
		ok           bool
	}{
		{"", "", Window{}, true},
		{"2026-01-01T00:00:30.000Z", "", Window{Since: time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)}, true},
		{"", "12", Window{After: 12}, true},
		{"2026-01-01T00:00:30Z", "12", Window{}, false},
		{"yesterday", "", Window{}, false},
		{"", "-1", Window{}, false},
	} {
		got, err := ParseWindow(tc.since, tc.after)
		if (err == nil) != tc.ok || (tc.ok && (!got.Since.Equal(tc.want.Since) || got.After != tc.want.After)) {
			t.Errorf("ParseWindow(%q, %q) = %+v, %v", tc.since, tc.after, got, err)
		}
	}
}

func TestAuthProblem(t *testing.T) {
	for header, want := range map[string]uint8{
		"Bearer svc_test_abc":  authRight,
		"bearer svc_test_abc":  authScheme,
		"BEARER svc_test_abc":  authScheme,
		"Bearer  svc_test_abc": authSpaces,
		"Bearer svc_test_abc ": authSpaces,
	} {
		if got := authProblem(header); got != want {
			t.Errorf("authProblem(%q) = %d, want %d", header, got, want)
		}
	}
}

// TestFingerprintIsFNV1a holds the in-place hash to the standard library's.
func TestFingerprintIsFNV1a(t *testing.T) {
	h := fnv.New64a()
	h.Write([]byte("GET\x00/v1/campaigns\x00"))
	if got, want := fingerprint("GET", "/v1/campaigns"), h.Sum64(); got != want {
		t.Errorf("fingerprint = %x, want %x", got, want)
	}
	if fingerprint("GET", "/v1/campaigns") == fingerprint("GET/v1", "/campaigns") {
		t.Error("parts that join to the same text have the same fingerprint")
	}
}

// FuzzParseWindow: any since and after give a window or an
// INVALID_PARAMETER error, never a panic, and never both bounds.
func FuzzParseWindow(f *testing.F) {
	f.Add("2026-01-01T00:00:30.000Z", "")
	f.Add("", "42")
	f.Add("2026-01-01T00:00:30+02:00", "1")
	f.Add("\x00", "-0")
	f.Add("", "18446744073709551616")
	f.Fuzz(func(t *testing.T, since, after string) {
		w, err := ParseWindow(since, after)
		if err != nil {
			var apiErr *sandbox.Error
			if !errors.As(err, &apiErr) || apiErr.Code != sandbox.ErrInvalidParameter {
				t.Errorf("ParseWindow(%q, %q): %v, want INVALID_PARAMETER", since, after, err)
			}
			return
		}
		if !w.Since.IsZero() && w.After != 0 {
			t.Errorf("ParseWindow(%q, %q) = %+v: both bounds", since, after, w)
		}
	})
}

// TestAPOSTGivenUpAndSentAgainIsJudged: a client that times out on a POST
// and sends it again may do so before the sandbox sees it leave; the second
// send is still one too many (CLI-11).
func TestAPOSTGivenUpAndSentAgainIsJudged(t *testing.T) {
	trace := NewTrace(nil)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	post := func(n uint64, arrived, ended time.Duration, status int, abandoned bool) {
		trace.Observe(Observation{
			Request: n, Method: http.MethodPost, Path: "/v1/campaigns", ContentType: "application/json",
			Body: []byte(`{"name":"Checkout"}`), BodyBytes: 19, ContentLength: 19, Authorization: "Bearer svc_test_abc",
			At: start.Add(arrived), Answered: start.Add(ended), Arrived: start.Add(arrived), Ended: start.Add(ended),
			Status: status, Abandoned: abandoned,
		})
	}
	post(2, 100*time.Millisecond, 150*time.Millisecond, http.StatusOK, false)
	post(1, 0, 200*time.Millisecond, 0, true)
	v := Judge(trace, nil, Window{})
	for _, r := range v.Rules {
		if r.ID != "CLI-11" {
			continue
		}
		if r.Outcome != Broken || len(r.Breaks) != 1 || len(r.Breaks[0].Requests) != 2 || r.Breaks[0].Requests[1].Request != 2 {
			t.Fatalf("CLI-11: %+v", r)
		}
		return
	}
	t.Fatal("no CLI-11 in the verdict")
}

// observer builds a trace by hand: each request arrives after the last
// one ended, by the gap given, on the connection given.
type observer struct {
	trace *Trace
	n     uint64
	clock time.Time
}

func newObserver() *observer {
	return &observer{trace: NewTrace(nil), clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (o *observer) observe(gap time.Duration, conn string, ob Observation) {
	o.n++
	o.clock = o.clock.Add(gap)
	ob.Request, ob.Conn = o.n, conn
	if ob.Method == "" {
		ob.Method = http.MethodGet
	}
	ob.Authorization = "Bearer svc_test_observer"
	ob.At, ob.Arrived = o.clock, o.clock
	o.clock = o.clock.Add(time.Millisecond)
	ob.Answered, ob.Ended = o.clock, o.clock
	o.trace.Observe(ob)
}

func (o *observer) outcome(t *testing.T, id string) RuleVerdict {
	t.Helper()
	for _, r := range Judge(o.trace, nil, Window{}).Rules {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no %s", id)
	return RuleVerdict{}
}

// TestALibraryRetryIsNoSendOfTheApplication: a GET whose kept-alive
// connection closed before any answer byte, sent again at once on a new
// connection, is the HTTP library's doing; the application's five sends
// stay five (CLI-7). The same re-send on the connection's first request is
// the application's, and makes six.
func TestALibraryRetryIsNoSendOfTheApplication(t *testing.T) {
	closed := &sandbox.Fault{ID: "flt_000001", FaultSpec: sandbox.FaultSpec{Network: sandbox.NetworkClose}}
	for _, tc := range []struct {
		reused bool
		want   string
	}{{true, Held}, {false, Broken}} {
		o := newObserver()
		if tc.reused {
			o.observe(0, "127.0.0.1:1000", Observation{Path: "/v1/campaigns", Status: http.StatusOK})
		}
		o.observe(time.Second, "127.0.0.1:1000", Observation{Path: "/v1/testers", Received: "nothing", Fault: closed})
		o.observe(time.Millisecond, "127.0.0.1:1001", Observation{Path: "/v1/testers", Status: http.StatusInternalServerError})
		for i, wait := range []time.Duration{200, 400, 800, 1600} {
			o.observe(wait*time.Millisecond, fmt.Sprintf("127.0.0.1:%d", 1002+i), Observation{Path: "/v1/testers", Status: http.StatusInternalServerError})
		}
		if got := o.outcome(t, "CLI-7"); got.Outcome != tc.want {
			t.Errorf("reused connection %t: CLI-7 %s, want %s: %+v", tc.reused, got.Outcome, tc.want, got.Breaks)
		}
	}
}

// TestBackOffIsJudgedOnTheRunsEnvelope holds the bars of CLI-8: nothing
// asked of a first retry, the longest wait at least 10 ms by the second,
// 100 ms by the third, and doubling after.
func TestBackOffIsJudgedOnTheRunsEnvelope(t *testing.T) {
	for _, tc := range []struct {
		waits []time.Duration
		want  string
	}{
		{[]time.Duration{0}, Held},
		{[]time.Duration{0, 9}, Broken},
		{[]time.Duration{0, 10}, Held},
		{[]time.Duration{5, 10, 99}, Broken},
		{[]time.Duration{5, 10, 100}, Held},
		{[]time.Duration{100, 100, 100, 199}, Broken},
		{[]time.Duration{199, 100, 100, 100}, Broken},
		{[]time.Duration{200, 100, 100, 100}, Held},
		{[]time.Duration{150, 500, 180, 300}, Held},
	} {
		o := newObserver()
		failed := Observation{Path: "/v1/testers", Status: http.StatusInternalServerError}
		o.observe(0, "127.0.0.1:1000", failed)
		for _, w := range tc.waits {
			o.observe(w*time.Millisecond, "127.0.0.1:1000", failed)
		}
		if got := o.outcome(t, "CLI-8"); got.Outcome != tc.want {
			t.Errorf("waits %v ms: CLI-8 %s, want %s: %+v", tc.waits, got.Outcome, tc.want, got.Breaks)
		}
	}
}

// TestAQuietGapStartsANewCall: two calls, each failing three times, 30 s
// apart, are two runs of three sends, not one of six (CLI-7); a gap as long
// within a run that waited seconds already is a retry's.
func TestAQuietGapStartsANewCall(t *testing.T) {
	for _, tc := range []struct {
		gap  time.Duration
		want string
	}{{30 * time.Second, Held}, {5 * time.Second, Broken}} {
		o := newObserver()
		failed := Observation{Path: "/v1/testers", Status: http.StatusInternalServerError}
		for call := range 2 {
			gap := time.Duration(0)
			if call > 0 {
				gap = tc.gap
			}
			o.observe(gap, "127.0.0.1:1000", failed)
			o.observe(200*time.Millisecond, "127.0.0.1:1000", failed)
			o.observe(400*time.Millisecond, "127.0.0.1:1000", failed)
		}
		if got := o.outcome(t, "CLI-7"); got.Outcome != tc.want {
			t.Errorf("gap %s: CLI-7 %s, want %s", tc.gap, got.Outcome, tc.want)
		}
	}
}

// TestATraceIsChargedWhatItHolds fills traces, one of ordinary requests
// and one of requests with long paths each its own, and holds what each
// was charged to what the heap grew by, within a tenth.
func TestATraceIsChargedWhatItHolds(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	long := strings.Repeat("x", maxPath)
	for name, path := range map[string]func(i int) string{
		"ordinary": func(int) string { return "/v1/campaigns" },
		"hostile":  func(i int) string { return fmt.Sprintf("/v1/campaigns/%d%s", i, long) },
	} {
		var charged int64
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		trace := NewTrace(func(n int64) { charged += n })
		for i := 1; i <= 2*MaxExchanges; i++ {
			trace.Observe(Observation{
				Request: uint64(i), Method: http.MethodPost, Path: path(i), Authorization: "bearer svc_test_abc",
				ContentType: "text/plain", Body: []byte(`{"name":"svc_test_abc"}`), BodyBytes: 23, ContentLength: 23,
				At: at, Answered: at, Arrived: at, Ended: at, Status: http.StatusOK, Received: "nothing",
				Fault: &sandbox.Fault{ID: "flt_000001", FaultSpec: sandbox.FaultSpec{Network: sandbox.NetworkReset}},
			})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		runtime.KeepAlive(trace)
		t.Logf("%s: charged %d bytes, the heap grew by %d", name, charged, grew)
		if charged < grew*9/10 || charged > grew*11/10 {
			t.Errorf("%s: charged %d bytes for a heap grown by %d", name, charged, grew)
		}
	}
}

// TestEveryClientRuleIsJudged: each client rule of docs/contract.md has its
// place among the judgements, and each place its rule.
func TestEveryClientRuleIsJudged(t *testing.T) {
	rules := docs.ClientRules()
	for _, r := range rules {
		if _, ok := ruleNumber(r.ID); !ok {
			t.Errorf("%s is not judged", r.ID)
		}
	}
	if len(rules) != cli14 {
		t.Errorf("the contract has %d client rules, the verdict judges %d", len(rules), cli14)
	}
}
