package clientverdict

import (
	"errors"
	"hash/fnv"
	"net/http"
	"testing"
	"time"

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
	kept, forgotten := trace.snapshot()
	if len(kept) != MaxExchanges || forgotten != extra {
		t.Errorf("kept %d, forgot %d; want %d and %d", len(kept), forgotten, MaxExchanges, extra)
	}
	if kept[0].request != extra+1 || kept[len(kept)-1].request != MaxExchanges+extra {
		t.Errorf("kept requests %d to %d, want the last %d", kept[0].request, kept[len(kept)-1].request, MaxExchanges)
	}
	if want := int64(MaxExchanges * exchangeBytes); charged != want {
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
	kept, _ := trace.snapshot()
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
	for header, want := range map[string]bool{
		"Bearer svc_test_abc":  false,
		"bearer svc_test_abc":  true,
		"BEARER svc_test_abc":  true,
		"Bearer  svc_test_abc": true,
		"Bearer svc_test_abc ": true,
	} {
		if got := authProblem(header) != ""; got != want {
			t.Errorf("authProblem(%q) = %q", header, authProblem(header))
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
