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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

func TestAKeyInAPathQueryOrBodyIsNeverLoggedOrEchoed(t *testing.T) {
	const secret = "0123456789abcdefSECRET"
	key := "svc_test_" + secret
	var logs bytes.Buffer
	c := &client{t: t, key: testKey, handler: sandboxtest.NewHandler(t, sandboxtest.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})}
	var answers [][]byte
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/v1/campaigns/" + key, ""},
		{"GET", "/v1/" + key + "/x", ""},
		{"DELETE", "/v1/campaigns/" + key, ""},
		{"GET", "/v1/campaigns?status=" + key, ""},
		{"GET", "/v1/campaigns?status=svc%5Ftest%5F" + secret, ""},
		{"POST", "/v1/campaigns", `{"name":"a","platform":"` + key + `","testersRequired":1,"rewardPerBug":1}`},
		{"POST", "/v1/webhooks", `{"url":"http://x/` + key + `","events":["` + key + `"]}`},
	} {
		answers = append(answers, c.do(req.method, req.path, req.body).raw)
	}
	answers = append(answers, c.do("GET", "/_sandbox/requests", "").raw)
	for _, answer := range answers {
		if bytes.Contains(answer, []byte(secret[:12])) {
			t.Errorf("answer repeats the key: %s", answer)
		}
	}
	if strings.Contains(logs.String(), secret[:12]) {
		t.Errorf("log repeats the key:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "svc_test_…CRET") {
		t.Errorf("log does not show the key's hint in its place:\n%s", logs.String())
	}
}

func TestEchoedValuesAreBounded(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	long := strings.Repeat("x", 5000)
	for _, res := range []response{
		c.fails("GET", "/v1/campaigns/cmp_"+long, "", http.StatusNotFound, "NOT_FOUND"),
		c.fails("GET", "/v1/"+long, "", http.StatusNotFound, "NOT_FOUND"),
		c.fails("GET", "/v1/campaigns?platform="+long, "", http.StatusBadRequest, "INVALID_PARAMETER"),
		c.fails("POST", "/v1/campaigns", `{"name":"a","platform":"`+strings.Repeat(`\u0001`, 100_000)+`","testersRequired":1,"rewardPerBug":1}`, http.StatusBadRequest, "VALIDATION_ERROR"),
	} {
		if len(res.raw) > 1024 {
			t.Errorf("%d-byte answer: %.120s", len(res.raw), res.raw)
		}
	}
}

func TestDuplicatedFieldsAndLongNumbersAreRefused(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	c.fails("POST", "/v1/campaigns", `{"name":"a","name":"b","platform":"ios","testersRequired":1,"rewardPerBug":1}`, http.StatusBadRequest, "INVALID_JSON")
	c.fails("POST", "/v1/campaigns", `{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1.`+strings.Repeat("0", 10_000)+`}`, http.StatusBadRequest, "VALIDATION_ERROR")
}

// fromClient sends a request as the client at addr, through a proxy that
// the sandbox trusts to name it.
func fromClient(c *client, addr, method, path string) response {
	c.t.Helper()
	return c.do(method, path, "", "X-Forwarded-For", "203.0.113.9, "+addr)
}

func TestClientBudgetCountsEveryRequest(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt, Clients: httpapi.ClientLimits{Requests: 4, TrustForwardedFor: true}})
	fromClient(c, "192.0.2.7", "GET", "/healthz")
	fromClient(c, "192.0.2.7", "GET", "/v1/testers")
	fromClient(c.withKey(""), "192.0.2.7", "GET", "/v1/testers")
	fromClient(c, "192.0.2.7", "GET", "/nowhere")
	for _, path := range []string{"/healthz", "/v1/testers", "/openapi.json"} {
		res := fromClient(c, "192.0.2.7", "GET", path)
		if res.status != http.StatusTooManyRequests || res.env.Error == nil || res.env.Error.Code != "RATE_LIMIT_EXCEEDED" {
			t.Fatalf("%s over the client budget: %d %s", path, res.status, res.raw)
		}
		if limit, remaining, _ := rateHeaders(t, res); limit != 4 || remaining != 0 || res.header.Get("Retry-After") == "" {
			t.Errorf("client 429: limit %d remaining %d Retry-After %q", limit, remaining, res.header.Get("Retry-After"))
		}
	}
	// Another address, and the same one with a different proxy before it,
	// are their own clients.
	if res := fromClient(c, "192.0.2.8", "GET", "/healthz"); res.status != http.StatusOK {
		t.Errorf("another client refused: %d %s", res.status, res.raw)
	}
}

func TestForwardedForCountsOnlyWhenTrusted(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt, Clients: httpapi.ClientLimits{Requests: 2}})
	fromClient(c, "192.0.2.1", "GET", "/healthz")
	fromClient(c, "192.0.2.2", "GET", "/healthz")
	if res := fromClient(c, "192.0.2.3", "GET", "/healthz"); res.status != http.StatusTooManyRequests {
		t.Errorf("X-Forwarded-For chose the client although not trusted: %d", res.status)
	}
}

func TestAKeyFloodFromOneClientEvictsNoOtherAccount(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt, MaxAccounts: 20, Clients: httpapi.ClientLimits{NewAccounts: 10, TrustForwardedFor: true}})
	tenant := c.withKey("svc_test_tenant-of-another-client")
	if res := tenant.do("POST", "/v1/campaigns", validCampaign, "X-Forwarded-For", "192.0.2.50"); res.status != http.StatusOK {
		t.Fatalf("tenant's create: %d %s", res.status, res.raw)
	}
	refused := 0
	for i := range 200 {
		res := fromClient(c.withKey("svc_test_flood-"+strconv.Itoa(i)), "192.0.2.66", "GET", "/v1/testers")
		if res.status == http.StatusTooManyRequests {
			refused++
			if limit, _, _ := rateHeaders(t, res); limit != 10 {
				t.Fatalf("new-account 429 reports limit %d, want 10", limit)
			}
		}
	}
	if refused != 190 {
		t.Errorf("%d of 200 new keys refused, want all past the 10 allowed", refused)
	}
	// The flooding client's existing accounts still work.
	if res := fromClient(c.withKey("svc_test_flood-3"), "192.0.2.66", "GET", "/v1/testers"); res.status != http.StatusOK {
		t.Errorf("a held account of the flooding client refused: %d", res.status)
	}
	res := tenant.do("GET", "/v1/campaigns?limit=100", "", "X-Forwarded-For", "192.0.2.50")
	if res.status != http.StatusOK || !strings.Contains(string(res.env.Data), "Checkout") {
		t.Errorf("the other tenant's account was lost: %d %s", res.status, res.raw)
	}
}

// rawExchange sends a hand-written request to a real server, then half
// closes, and returns the answer and the log.
func rawExchange(t *testing.T, request string) (*http.Response, []byte, string) {
	t.Helper()
	var logs bytes.Buffer
	srv := httptest.NewServer(sandboxtest.NewHandler(t, sandboxtest.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, request)
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	// Close waits for the handler, so the log is complete.
	srv.Close()
	return res, body, logs.String()
}

func TestABodyCutShortIs400LoggedAtInfo(t *testing.T) {
	res, body, logs := rawExchange(t, "POST /v1/campaigns HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+testKey+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":")
	if res.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(`"code":"INVALID_JSON"`)) || !bytes.Contains(body, []byte("8 of the 100 bytes")) {
		t.Errorf("body cut short: %d %s", res.StatusCode, body)
	}
	if strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "status=400") {
		t.Errorf("want one INFO line with status 400:\n%s", logs)
	}
}

// deadlineRecorder is a ResponseWriter that, like a server's, takes a write
// deadline.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadline time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadline = t
	return nil
}

func TestAResponseGetsAWriteDeadlineWhenItStarts(t *testing.T) {
	built := sandboxtest.New(t, sandboxtest.Options{})
	handler := httpapi.NewServer(httpapi.Options{Accounts: built.Accounts, WriteTimeout: 7 * time.Second})
	for _, path := range []string{"/healthz", "/openapi.json", "/v1/nowhere"} {
		rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
		before := time.Now()
		handler.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.deadline.Before(before.Add(7*time.Second)) || rec.deadline.After(time.Now().Add(7*time.Second)) {
			t.Errorf("%s: write deadline %v, want 7s after the response started (%v)", path, rec.deadline, before)
		}
	}
}
