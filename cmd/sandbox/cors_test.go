package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/testcampaign/kit/internal/browsertest"
	"github.com/testcampaign/kit/sandbox/app"
	"github.com/testcampaign/kit/sandbox/httpapi"
)

func TestParseCORSOrigins(t *testing.T) {
	cfg, err := parseFlags([]string{"-cors-origins", "http://localhost:3000, HTTP://LocalHost:8081/"}, io.Discard)
	if err != nil || strings.Join(cfg.app.CORS.Origins, " ") != "http://localhost:3000 http://localhost:8081" {
		t.Errorf("two origins: %q, %v", cfg.app.CORS.Origins, err)
	}
	if cfg, err := parseFlags([]string{"-cors-origins", "*"}, io.Discard); err != nil || len(cfg.app.CORS.Origins) != 1 {
		t.Errorf("*: %q, %v", cfg.app.CORS.Origins, err)
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || len(cfg.app.CORS.Origins) != 0 {
		t.Errorf("default: %q, %v; want no origin", cfg.app.CORS.Origins, err)
	}
	for _, bad := range []string{"localhost:3000", "http://localhost:3000/app", "http://u@localhost", "*,http://localhost:3000", "http://localhost?x=1", "http://*.example.com", "https://app.example.*"} {
		if _, err := parseFlags([]string{"-cors-origins", bad}, io.Discard); err == nil || !strings.Contains(err.Error(), "-cors-origins") {
			t.Errorf("-cors-origins %q: %v, want a refusal that names the flag", bad, err)
		}
	}
}

// exchange sends one request to the sandbox, with headers as name, value
// pairs, and returns the answer with its body read.
func exchange(t *testing.T, method, url string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

func accessControlHeaders(h http.Header) []string {
	var names []string
	for name := range h {
		if strings.HasPrefix(name, "Access-Control-") || name == "Vary" {
			names = append(names, name)
		}
	}
	return names
}

// A preflight of an allowed origin is answered on every route and control,
// before the key, the client budget, faults and the journal; the request it
// asks about is served as without CORS, and its script may read the rate
// limits and the fault. (WEB-2, WEB-3, WEB-7)
func TestCORSPreflightsAndAnswers(t *testing.T) {
	const origin = "http://localhost:3000"
	const key = "svc_test_cors_preflights"
	base, stop := startRun(t, config{app: appWithCORS(origin, 3)})
	defer stop()
	auth := "Bearer " + key

	planned, body := postJSON(t, base+"/_sandbox/faults", key, `{"method":"GET","path":"/v1/campaigns","status":503,"retryAfter":7}`)
	if planned.StatusCode != http.StatusOK {
		t.Fatalf("plan a fault: %d %s", planned.StatusCode, body)
	}

	for _, tc := range []struct{ method, path, allowed string }{
		{"GET", "/v1/campaigns", "GET, HEAD, POST"},
		{"POST", "/v1/campaigns", "GET, HEAD, POST"},
		{"PATCH", "/v1/bugs/bug_000001", "PATCH"},
		{"DELETE", "/_sandbox/faults", "GET, HEAD, POST, DELETE"},
		{"GET", "/_sandbox/clock", "GET, HEAD, POST"},
		{"GET", "/healthz", "GET, HEAD"},
		{"GET", "/openapi.json", "GET, HEAD"},
		{"GET", "/v1/no-such-route", "GET, HEAD, POST, PUT, PATCH, DELETE"},
	} {
		res, body := exchange(t, "OPTIONS", base+tc.path, "Origin", origin,
			"Access-Control-Request-Method", tc.method,
			"Access-Control-Request-Headers", "authorization,content-type,x-client-attempt,traceparent")
		h := res.Header
		if res.StatusCode != http.StatusNoContent || body != "" {
			t.Errorf("preflight of %s %s: %d %q, want 204 and no body", tc.method, tc.path, res.StatusCode, body)
		}
		if h.Get("Access-Control-Allow-Origin") != origin || h.Get("Access-Control-Allow-Methods") != tc.allowed ||
			h.Get("Access-Control-Allow-Headers") != "authorization,content-type,x-client-attempt,traceparent" || h.Get("Access-Control-Max-Age") == "" {
			t.Errorf("preflight of %s %s: %v", tc.method, tc.path, h)
		}
		if !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
			t.Errorf("preflight of %s %s: Vary %q lacks Origin", tc.method, tc.path, h.Values("Vary"))
		}
	}

	// The client budget of 3 was not spent by the 8 preflights: the fault
	// is still planned and hits the request the preflight was for.
	res, _ := exchange(t, "GET", base+"/v1/campaigns", "Origin", origin, "Authorization", auth)
	h := res.Header
	if res.StatusCode != http.StatusServiceUnavailable || h.Get("Retry-After") != "7" || h.Get("X-Sandbox-Fault") == "" {
		t.Errorf("the faulted request: %d %v", res.StatusCode, h)
	}
	if h.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("the faulted request: Access-Control-Allow-Origin %q", h.Get("Access-Control-Allow-Origin"))
	}
	exposed := h.Get("Access-Control-Expose-Headers")
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Scope", "Retry-After", "X-Sandbox-Fault"} {
		if !strings.Contains(exposed, name) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, name)
		}
	}

	// The journal holds the faulted GET and nothing of the preflights.
	res, journal := exchange(t, "GET", base+"/_sandbox/requests", "Authorization", auth)
	if res.StatusCode != http.StatusOK || strings.Contains(journal, "OPTIONS") || !strings.Contains(journal, `"GET"`) {
		t.Errorf("the journal: %d %s", res.StatusCode, journal)
	}

	// Now the budget of 3 is spent: the refusal reaches the script too.
	res, _ = exchange(t, "GET", base+"/openapi.json", "Origin", origin)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("over the client budget: %d %v", res.StatusCode, res.Header)
	}
}

// An origin not listed gets what it would without the flag: no
// Access-Control-* header, and its preflight needs a key like any request.
func TestCORSIgnoresOtherOrigins(t *testing.T) {
	base, stop := startRun(t, config{app: appWithCORS("http://localhost:3000", 0)})
	defer stop()
	res, _ := exchange(t, "OPTIONS", base+"/v1/campaigns", "Origin", "http://evil.example", "Access-Control-Request-Method", "GET")
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of another origin: %d %v", res.StatusCode, res.Header)
	}
	res, _ = exchange(t, "GET", base+"/healthz", "Origin", "http://evil.example")
	if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "" || res.Header.Get("Access-Control-Expose-Headers") != "" {
		t.Errorf("a request of another origin: %d %v", res.StatusCode, res.Header)
	}
}

// Without -cors-origins nothing changes: no Access-Control-* or Vary
// header, and an OPTIONS request is refused as before. (WEB-1)
func TestWithoutCORSOriginsNothingChanges(t *testing.T) {
	base, stop := startRun(t, config{})
	defer stop()
	res, _ := exchange(t, "OPTIONS", base+"/v1/campaigns", "Origin", "http://localhost:3000",
		"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization")
	if res.StatusCode != http.StatusUnauthorized || len(accessControlHeaders(res.Header)) > 0 {
		t.Errorf("preflight without a key: %d %v", res.StatusCode, res.Header)
	}
	res, _ = exchange(t, "OPTIONS", base+"/v1/campaigns", "Origin", "http://localhost:3000",
		"Access-Control-Request-Method", "GET", "Authorization", "Bearer svc_test_no_cors")
	if res.StatusCode != http.StatusMethodNotAllowed || len(accessControlHeaders(res.Header)) > 0 {
		t.Errorf("preflight with a key: %d %v", res.StatusCode, res.Header)
	}
	for _, path := range []string{"/healthz", "/openapi.json", "/v1/campaigns"} {
		res, _ = exchange(t, "GET", base+path, "Origin", "http://localhost:3000", "Authorization", "Bearer svc_test_no_cors")
		if res.StatusCode != http.StatusOK || len(accessControlHeaders(res.Header)) > 0 {
			t.Errorf("GET %s from another origin: %d %v", path, res.StatusCode, res.Header)
		}
	}
}

func appWithCORS(origin string, clientLimit int) app.Config {
	cors, err := httpapi.ParseCORSOrigins(origin)
	if err != nil {
		panic(err)
	}
	return app.Config{CORS: cors, Clients: httpapi.ClientLimits{Requests: clientLimit}}
}

func postJSON(t *testing.T, url, key, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(raw)
}

// browserPage is a test app on one origin that calls the sandbox on
// another, as a web SDK would, and writes what its script could read into
// the page: a campaign with its rate-limit headers, a planned 503 with its
// Retry-After and X-Sandbox-Fault, and a write with a JSON body.
const browserPage = `<!doctype html>
<html><body><pre id="result">pending</pre><script>
const base = %q, auth = {Authorization: "Bearer %s"};
async function call(path, init) {
  try {
    const res = await fetch(base + path, init);
    const body = await res.json();
    const h = (name) => res.headers.get(name);
    return {status: res.status, id: body.data && body.data.id, limit: h("X-RateLimit-Limit"),
      remaining: h("X-RateLimit-Remaining"), scope: h("X-RateLimit-Scope"),
      retryAfter: h("Retry-After"), fault: h("X-Sandbox-Fault")};
  } catch (err) {
    return {error: String(err)};
  }
}
(async () => {
  const out = {};
  out.read = await call("/v1/campaigns/cmp_000001", {headers: {...auth, "X-Client-Attempt": "1"}});
  out.faulted = await call("/v1/campaigns/cmp_000002", {headers: auth});
  out.created = await call("/v1/campaigns", {method: "POST",
    headers: {...auth, "Content-Type": "application/json"},
    body: JSON.stringify({name: "From a page", platform: "web", testersRequired: 2, rewardPerBug: 1.5})});
  out.health = await call("/healthz", {});
  document.getElementById("result").textContent = JSON.stringify(out);
})();
</script></body></html>`

type browserCall struct {
	Status     int    `json:"status"`
	ID         string `json:"id"`
	Limit      string `json:"limit"`
	Remaining  string `json:"remaining"`
	Scope      string `json:"scope"`
	RetryAfter string `json:"retryAfter"`
	Fault      string `json:"fault"`
	Error      string `json:"error"`
}

var resultRe = regexp.MustCompile(`(?s)<pre id="result">(.*?)</pre>`)

// openInChromium loads the page at url in headless Chromium, waits until
// its fetches are answered (virtual time stands still while a request is
// pending), and returns what the page's script wrote.
func openInChromium(t *testing.T, browser, url string) map[string]browserCall {
	t.Helper()
	out := browsertest.DumpDOM(t, browser, url, "--virtual-time-budget=30000")
	m := resultRe.FindSubmatch(out)
	if m == nil {
		t.Fatalf("the page has no result:\n%s", out)
	}
	var calls map[string]browserCall
	if err := json.Unmarshal(bytes.ReplaceAll(m[1], []byte("&amp;"), []byte("&")), &calls); err != nil {
		t.Fatalf("the page wrote %s: %v", m[1], err)
	}
	return calls
}

// pageOrigin listens for a test app on an origin of its own, and returns
// the origin and a function that starts serving browserPage there for the
// sandbox at sandboxURL.
func pageOrigin(t *testing.T, key string) (origin string, serve func(sandboxURL string)) {
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	return "http://" + srv.Listener.Addr().String(), func(sandboxURL string) {
		page := fmt.Sprintf(browserPage, sandboxURL, key)
		srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, page)
		})
		srv.Start()
	}
}

// A page on another origin, in a real browser, reads a campaign and its
// rate-limit headers from a sandbox started with -cors-origins, and the
// headers of a planned fault; without the flag the browser blocks every
// call. (WEB-2, WEB-3, WEB-1)
func TestABrowserPageOnAnotherOriginUsesTheSandbox(t *testing.T) {
	browser := browsertest.Chromium(t)
	const key = "svc_test_browser_page"

	t.Run("with -cors-origins", func(t *testing.T) {
		page, serve := pageOrigin(t, key)
		base, stop := startRun(t, config{app: appWithCORS(page, 0)})
		defer stop()
		serve(base)
		if res, body := postJSON(t, base+"/_sandbox/faults", key, `{"path":"/v1/campaigns/cmp_000002","status":503,"retryAfter":4}`); res.StatusCode != http.StatusOK {
			t.Fatalf("plan a fault: %d %s", res.StatusCode, body)
		}

		calls := openInChromium(t, browser, page)
		read := calls["read"]
		if read.Status != http.StatusOK || read.ID != "cmp_000001" || read.Limit != "1000" || read.Remaining == "" || read.Scope != "key" {
			t.Errorf("the page read %+v; want campaign cmp_000001 and its rate-limit headers", read)
		}
		if f := calls["faulted"]; f.Status != http.StatusServiceUnavailable || f.RetryAfter != "4" || f.Fault == "" {
			t.Errorf("the page saw the planned fault as %+v; want 503 with Retry-After 4 and X-Sandbox-Fault", f)
		}
		if c := calls["created"]; c.Status != http.StatusOK || c.ID == "" {
			t.Errorf("the page's POST: %+v", c)
		}
		if h := calls["health"]; h.Status != http.StatusOK {
			t.Errorf("the page's /healthz: %+v", h)
		}
	})

	t.Run("without the flag", func(t *testing.T) {
		page, serve := pageOrigin(t, key)
		base, stop := startRun(t, config{})
		defer stop()
		serve(base)
		calls := openInChromium(t, browser, page)
		for _, name := range []string{"read", "faulted", "created", "health"} {
			if c := calls[name]; c.Error == "" {
				t.Errorf("%s: the browser let the page read %+v; want the call blocked", name, c)
			}
		}
	})
}
