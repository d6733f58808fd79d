package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

const operatorKey = "svc_test_operator_0123456789"

// throttling answers 429 with the given headers to the first n requests,
// then 200 with the body it was sent.
func throttling(t *testing.T, n int, header http.Header) (*httptest.Server, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		seen := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if seen <= n {
			for k, v := range header {
				w.Header()[k] = v
			}
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"success":false,"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow down","status":429}}`))
			return
		}
		_, _ = w.Write([]byte(`{"success":true,"data":` + string(b) + `}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &bodies
}

// client is a run's target whose waits are recorded instead of slept.
func client(srv *httptest.Server) (*Target, *[]time.Duration) {
	var waits []time.Duration
	tgt := &Target{BaseURL: srv.URL, Key: operatorKey, Profile: "spec", Client: NewClient(4, 5*time.Second),
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	return tgt, &waits
}

func post(t *testing.T, tgt *Target, key string, sink *rules.Sink) (*wire.Exchange, error) {
	t.Helper()
	return tgt.Send(context.Background(), Request{Method: http.MethodPost, Path: "/v1/campaigns", Key: key, Body: []byte(`{"name":"x"}`), Sink: sink})
}

func TestUnplannedThrottlingIsWaitedOut(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		key    string
	}{
		{"a client address's budget, any key", http.Header{"X-Ratelimit-Scope": {"client"}, "Retry-After": {"30"}}, "svc_test_fresh_0123456789"},
		{"the operator key's window, spent by its other clients", http.Header{"X-Ratelimit-Scope": {"key"}, "Retry-After": {"12"}}, operatorKey},
		{"a deployment that names no scope", http.Header{"Retry-After": {"12"}}, operatorKey},
		{"the operator key's controls budget", http.Header{"X-Ratelimit-Scope": {"controls"}, "Retry-After": {"12"}}, operatorKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, bodies := throttling(t, 2, tt.header)
			tgt, waits := client(srv)
			ex, err := post(t, tgt, tt.key, rules.NewSink(nil))
			if err != nil {
				t.Fatal(err)
			}
			if ex.Status != http.StatusOK || !bytes.Contains(ex.Body, []byte(`"name":"x"`)) {
				t.Errorf("got %d %s, want the 200 of the third try", ex.Status, ex.Body)
			}
			want := tt.header.Get("Retry-After") + "s"
			if len(*waits) != 2 || (*waits)[0].String() != want || (*waits)[1].String() != want {
				t.Errorf("waited %v, want twice %s as Retry-After says", *waits, want)
			}
			for i, body := range *bodies {
				if body != `{"name":"x"}` {
					t.Errorf("try %d sent %q, want the body whole again", i+1, body)
				}
			}
		})
	}
}

func TestPlannedThrottlingIsTheScenarios(t *testing.T) {
	exhaustive := rules.NewSink(nil)
	exhaustive.Unbudgeted = true
	tests := []struct {
		name   string
		header http.Header
		key    string
		sink   *rules.Sink
	}{
		{"a planned fault's 429", http.Header{"X-Ratelimit-Scope": {"key"}, "X-Sandbox-Fault": {"flt_000001"}, "Retry-After": {"7"}}, operatorKey, rules.NewSink(nil)},
		{"a fresh account's own window", http.Header{"X-Ratelimit-Scope": {"key"}, "Retry-After": {"7"}}, "svc_test_fresh_0123456789", rules.NewSink(nil)},
		{"a fresh account's controls budget", http.Header{"X-Ratelimit-Scope": {"controls"}, "Retry-After": {"7"}}, "svc_test_fresh_0123456789", rules.NewSink(nil)},
		{"the operator key's window spent on purpose", http.Header{"X-Ratelimit-Scope": {"key"}, "Retry-After": {"7"}}, operatorKey, exhaustive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := throttling(t, 1, tt.header)
			tgt, waits := client(srv)
			ex, err := post(t, tgt, tt.key, tt.sink)
			if err != nil {
				t.Fatal(err)
			}
			if ex.Status != http.StatusTooManyRequests || len(*waits) != 0 {
				t.Errorf("got %d after waiting %v; want the 429 at once, for the steps to judge", ex.Status, *waits)
			}
		})
	}
}

func TestPersistentThrottlingStopsNamingTheBudget(t *testing.T) {
	tests := []struct {
		name      string
		header    http.Header
		wantWaits int
		budget    string
	}{
		{"a minute's budget that never frees", http.Header{"X-Ratelimit-Scope": {"client"}, "Retry-After": {"58"}, "X-Ratelimit-Limit": {"5000"}}, 2, "client address (X-RateLimit-Scope: client) (5000 a window)"},
		{"a day's window spent", http.Header{"X-Ratelimit-Scope": {"key"}, "Retry-After": {"3600"}}, 0, "the key's rate limit (X-RateLimit-Scope: key)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := throttling(t, 1000, tt.header)
			tgt, waits := client(srv)
			var heard *ThrottledError
			tgt.OnThrottled = func(e *ThrottledError) { heard = e }
			_, err := post(t, tgt, operatorKey, rules.NewSink(nil))
			var te *ThrottledError
			if !errors.As(err, &te) || !errors.Is(err, ErrThrottled) {
				t.Fatalf("error %v, want a ThrottledError", err)
			}
			if heard != te {
				t.Errorf("OnThrottled heard %v, want the request's error", heard)
			}
			if len(*waits) != tt.wantWaits {
				t.Errorf("waited %v, want %d waits within %s", *waits, tt.wantWaits, maxThrottleWait)
			}
			if !strings.Contains(err.Error(), tt.budget) || !strings.Contains(err.Error(), "POST /v1/campaigns") {
				t.Errorf("error %q does not name %q and the request", err, tt.budget)
			}
		})
	}
}

func TestRetryAfterForms(t *testing.T) {
	date := "Thu, 01 Jan 2026 00:00:00 GMT"
	tests := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{"Retry-After": {"30"}}, 30 * time.Second},
		{http.Header{"Retry-After": {"0"}}, time.Second},
		{http.Header{"Date": {date}, "Retry-After": {"Thu, 01 Jan 2026 00:00:20 GMT"}}, 20 * time.Second},
		{http.Header{"Date": {date}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1767225645"}}, 45 * time.Second},
		{http.Header{}, time.Second},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.header); got != tt.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tt.header, got, tt.want)
		}
	}
}

func TestSelfPacedRequestsGetTheirThrottlingBack(t *testing.T) {
	srv, _ := throttling(t, 1, http.Header{"X-Ratelimit-Scope": {"client"}, "Retry-After": {"30"}})
	tgt, waits := client(srv)
	ex, err := tgt.Send(context.Background(), Request{Method: http.MethodGet, Path: "/v1/testers", Key: operatorKey, Sink: rules.NewSink(nil), SelfPaced: true})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != http.StatusTooManyRequests || len(*waits) != 0 {
		t.Errorf("got %d after waiting %v; want the 429 handed back at once", ex.Status, *waits)
	}
}
