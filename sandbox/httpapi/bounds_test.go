package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

func TestOversizedRequestLinesAreRefusedAndNeverEchoed(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	long := strings.Repeat("a", 9000)
	for _, path := range []string{"/v1/" + long, "/v1/campaigns?status=" + long} {
		res := c.fails("GET", path, "", http.StatusRequestURITooLong, "URI_TOO_LONG")
		if bytes.Contains(res.raw, []byte(long[:300])) {
			t.Errorf("414 echoes the target: %d bytes", len(res.raw))
		}
	}
	c.withKey("").fails("GET", "/v1/"+long, "", http.StatusRequestURITooLong, "URI_TOO_LONG")

	// Under the limit, a 404 still names only a bounded prefix.
	res := c.fails("GET", "/v1/"+strings.Repeat("b", 5000), "", http.StatusNotFound, "NOT_FOUND")
	if len(res.env.Error.Message) > 400 {
		t.Errorf("404 message is %d bytes long", len(res.env.Error.Message))
	}
}

func TestUnreadableQueriesAreErrorsNotIgnored(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	// Each of these made net/url drop the query, filter and all, so the
	// answer was an unfiltered 200.
	for _, query := range []string{"status=draft&a=%zz", "status=draft;platform=ios"} {
		c.fails("GET", "/v1/campaigns?"+query, "", http.StatusBadRequest, "INVALID_PARAMETER")
	}
}

func TestHeadIsAnsweredWhereGetIs(t *testing.T) {
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	for _, path := range []string{"/v1/campaigns", "/v1/campaigns/cmp_000001", "/v1/testers", "/healthz"} {
		req, _ := http.NewRequest(http.MethodHead, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || len(body) != 0 || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("HEAD %s: %d, %d body bytes, %q", path, res.StatusCode, len(body), res.Header.Get("Content-Type"))
		}
		if path != "/healthz" && res.Header.Get("X-RateLimit-Limit") == "" {
			t.Errorf("HEAD %s has no rate-limit headers", path)
		}
	}
}

func TestSlowBodyGets408(t *testing.T) {
	srv := httptest.NewUnstartedServer(sandboxtest.NewHandler(t, sandboxtest.Options{}))
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/campaigns HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":", testKey)
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to a stalled body: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusRequestTimeout || !bytes.Contains(body, []byte(`"code":"REQUEST_TIMEOUT"`)) {
		t.Errorf("stalled body: %d %s", res.StatusCode, body)
	}
}

func TestControlsHaveTheirOwnBudget(t *testing.T) {
	c := newClient(t, sandboxtest.Options{ControlMinuteLimit: 2, Now: frozenAt})
	for range 2 {
		c.ok("GET", "/_sandbox/events", "", nil)
	}
	res := c.fails("POST", "/_sandbox/bugs", `{"campaignId":"cmp_000001","title":"t","severity":"low"}`, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if limit, remaining, _ := rateHeaders(t, res); limit != 2 || remaining != 0 || res.header.Get("Retry-After") == "" {
		t.Errorf("control 429: limit %d remaining %d Retry-After %q", limit, remaining, res.header.Get("Retry-After"))
	}
	// The refused control filed nothing, and the API budget is untouched.
	var bugs page[bug]
	c.ok("GET", "/v1/bugs?limit=100", "", &bugs)
	if len(bugs.Items) != 9 {
		t.Errorf("%d bugs after a refused filing, want the 9 seeded", len(bugs.Items))
	}
	if _, remaining, _ := rateHeaders(t, c.do("GET", "/v1/testers", "")); remaining != 998 {
		t.Errorf("API remaining %d after controls, want 998", remaining)
	}
}

func TestInjected429DoesNotSpendTheLimit(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt})
	c.ok("POST", "/_sandbox/faults", `{"status":429,"count":2}`, nil)
	for range 2 {
		res := c.fails("GET", "/v1/testers", "", http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
		if _, remaining, _ := rateHeaders(t, res); remaining != 1000 || res.header.Get("Retry-After") != "1" {
			t.Errorf("injected 429: remaining %d, Retry-After %q; want the untouched 1000 and 1", remaining, res.header.Get("Retry-After"))
		}
	}
	if _, remaining, _ := rateHeaders(t, c.do("GET", "/v1/testers", "")); remaining != 999 {
		t.Errorf("first real request left %d, want 999", remaining)
	}
}

func TestClientErrorsAreNotLoggedAsErrors(t *testing.T) {
	var logs bytes.Buffer
	c := &client{t: t, key: testKey, handler: sandboxtest.NewHandler(t, sandboxtest.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})}
	c.fails("GET", "/v1/nowhere", "", http.StatusNotFound, "NOT_FOUND")
	c.fails("POST", "/v1/campaigns", "{", http.StatusBadRequest, "INVALID_JSON")
	c.fails("PATCH", "/v1/bugs/bug_000001", `{"status":"new"}`, http.StatusConflict, "INVALID_STATUS_TRANSITION")
	c.withKey("svc_live_abc").fails("GET", "/v1/testers", "", http.StatusUnauthorized, "INVALID_API_KEY")
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("client errors logged at ERROR:\n%s", logs.String())
	}
}
