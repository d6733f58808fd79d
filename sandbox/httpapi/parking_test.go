package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// sendWithin sends a GET to an in-process sandbox that ends when ctx does.
func sendWithin(ctx context.Context, h http.Handler, key, path, client string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, "GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.RemoteAddr = client + ":1234"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestAKeyOverItsLimitIsRefusedBeforeAnyFaultHoldsIt(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt, MinuteLimit: 1})
	c.ok("POST", "/_sandbox/faults", `{"path":"/v1/bugs","delayMs":30000}`, nil)
	c.ok("GET", "/v1/testers", "", nil)
	// A context already done: a request that waited in the delay would
	// end there with no answer at all.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := sendWithin(ctx, c.handler, testKey, "/v1/bugs", "192.0.2.1")
	if res.Code != http.StatusTooManyRequests || res.Header().Get("X-RateLimit-Scope") != "key" || res.Header().Get("X-Sandbox-Fault") != "" {
		t.Errorf("over its limit: %d, scope %q, fault %q %s; want the key's 429 at once, no fault fired",
			res.Code, res.Header().Get("X-RateLimit-Scope"), res.Header().Get("X-Sandbox-Fault"), res.Body)
	}
	var faults page[struct{ Fired int }]
	c.ok("GET", "/_sandbox/faults", "", &faults)
	if len(faults.Items) != 1 || faults.Items[0].Fired != 0 {
		t.Errorf("faults after a refused request: %+v, want the delay unfired", faults.Items)
	}
}

func TestParkedRequestsAreBoundedPerKeyAndPerClient(t *testing.T) {
	sb := sandboxtest.New(t, sandboxtest.Options{Now: frozenAt})
	keys := make([]string, httpapi.MaxParkedPerClient/httpapi.MaxParkedPerKey+1)
	for i := range keys {
		keys[i] = "svc_test_parking-" + strconv.Itoa(i)
		c := &client{t: t, handler: sb.Handler, key: keys[i]}
		c.ok("POST", "/_sandbox/faults", `{"delayMs":30000,"count":100}`, nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var parked sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		parked.Wait()
	})
	park := func(key, client string, n int) {
		for range n {
			parked.Go(func() { sendWithin(ctx, sb.Handler, key, "/v1/testers", client) })
		}
		for a := sb.Accounts.Get(key); a.Parked.Load() < int32(n); {
			runtime.Gosched()
		}
	}
	answeredAtOnce := func(key, client, why string) {
		t.Helper()
		res := sendWithin(ctx, sb.Handler, key, "/v1/testers", client)
		if res.Code != http.StatusOK || res.Header().Get("X-Sandbox-Fault") == "" {
			t.Errorf("%s: %d, fault %q; want the faulted request answered at once", why, res.Code, res.Header().Get("X-Sandbox-Fault"))
		}
	}

	park(keys[0], "192.0.2.1", httpapi.MaxParkedPerKey)
	answeredAtOnce(keys[0], "192.0.2.1", "a key past its parked bound")
	for _, key := range keys[1 : len(keys)-1] {
		park(key, "192.0.2.1", httpapi.MaxParkedPerKey)
	}
	last := keys[len(keys)-1]
	answeredAtOnce(last, "192.0.2.1", "a fresh key of a client past its parked bound")
	// Another client's requests still wait as planned.
	park(last, "192.0.2.2", 1)
}

// A settle waits as a delayed request does: the key's settles and delays
// share one bound, so a key cannot hold more connections by waiting on its
// deliveries than by planning delays, and past the bound a settle answers
// at once with how its deliveries stand.
func TestSettlesAndDelaysShareTheKeysParkedBound(t *testing.T) {
	sb := sandboxtest.New(t, sandboxtest.Options{Now: frozenAt})
	hanging := make(chan struct{})
	receiver := newHookReceiver(t, func(http.ResponseWriter, *http.Request) { <-hanging })
	// Closed before the receiver's own cleanup, which waits for its handlers.
	t.Cleanup(func() { close(hanging) })
	c := &client{t: t, handler: sb.Handler, key: testKey}
	c.ok("POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["campaign.created"]}`, nil)
	c.ok("POST", "/v1/campaigns", validCampaign, nil)
	c.ok("POST", "/_sandbox/faults", `{"path":"/v1/testers","delayMs":30000,"count":100}`, nil)

	ctx, cancel := context.WithCancel(context.Background())
	var waiting sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		waiting.Wait()
	})
	settle := func(ctx context.Context) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(ctx, "POST", "/_sandbox/deliveries/settle", strings.NewReader(`{"timeoutMs":30000}`))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = "192.0.2.1:1234"
		rec := httptest.NewRecorder()
		sb.Handler.ServeHTTP(rec, req)
		return rec
	}
	for range httpapi.MaxParkedPerKey {
		waiting.Go(func() { settle(ctx) })
	}
	for a := sb.Accounts.Get(testKey); a.Parked.Load() < httpapi.MaxParkedPerKey; {
		runtime.Gosched()
	}
	res := sendWithin(ctx, sb.Handler, testKey, "/v1/testers", "192.0.2.1")
	if res.Code != http.StatusOK || res.Header().Get("X-Sandbox-Fault") == "" {
		t.Errorf("a delayed request beside %d settles: %d, fault %q; want it answered at once", httpapi.MaxParkedPerKey, res.Code, res.Header().Get("X-Sandbox-Fault"))
	}
	res = settle(ctx)
	if res.Code != http.StatusOK || !strings.Contains(res.Body.String(), `"settled":false`) {
		t.Errorf("a settle past the bound: %d %s; want 200 with settled false", res.Code, res.Body)
	}
}
