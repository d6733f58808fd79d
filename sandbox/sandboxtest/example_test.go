package sandboxtest_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/testcampaign/kit/openapi/client"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// A sandbox with a frozen clock answers the same requests with the same
// bytes, whatever the key and whenever the test runs.
func ExampleStart() {
	srv, err := sandboxtest.Start(sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		log.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/campaigns",
		strings.NewReader(`{"name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99}`))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer svc_test_example")
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	if err != nil {
		log.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status)
	fmt.Println(string(body))
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 200 OK
	// {"success":true,"data":{"id":"cmp_000005","name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99,"status":"draft","createdAt":"2026-01-01T00:00:00.000Z"}}
}

// A planned fault makes the next request fail, so a client's retry logic
// can be tested in a second.
func ExampleStart_fault() {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	send := func(method, path, body string) *http.Response {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer svc_test_example")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	send(http.MethodPost, "/_sandbox/faults", `{"status":503,"retryAfter":2}`)
	first := send(http.MethodGet, "/v1/campaigns", "")
	second := send(http.MethodGet, "/v1/campaigns", "")
	fmt.Println(first.StatusCode, "Retry-After:", first.Header.Get("Retry-After"))
	fmt.Println(second.StatusCode)
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 503 Retry-After: 2
	// 200
}

// Controls plan a fault and count what the client sent.
func ExampleControls() {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, ctl := context.Background(), sandboxtest.NewControls(srv.URL, "svc_test_example")
	// The next request to /v1/campaigns gets a 503.
	_, err = ctl.PlanFault(ctx, client.FaultPlanCreate{Path: new("/v1/campaigns"), Status: new(503)})
	if err != nil {
		log.Fatal(err)
	}
	// Your SDK's call goes here; a plain request stands in for it.
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/campaigns", nil)
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer svc_test_example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	sent, err := ctl.CountRequests(ctx, sandboxtest.RequestFilter{Method: "GET", Path: "/v1/campaigns"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.StatusCode, res.Header.Get("X-Sandbox-Fault"), sent)
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: 503 flt_000001 1
}

// Run the suite, then ask the verdict on the client: here a client that
// retries a 503 at once, before its Retry-After. In a test,
// ctl.RequireClientRulesHeld(t, sandboxtest.Window{}) fails it with the
// broken rules listed, as BrokenRules writes them.
func ExampleControls_Verdict() {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, ctl := context.Background(), sandboxtest.NewControls(srv.URL, "svc_test_example")
	_, err = ctl.PlanFault(ctx, client.FaultPlanCreate{Path: new("/v1/campaigns"), Status: new(503)})
	if err != nil {
		log.Fatal(err)
	}
	// Your SDK's suite goes here; a retry too soon stands in for it.
	for range 2 {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/campaigns", nil)
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer svc_test_example")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
	}
	verdict, err := ctl.Verdict(ctx, sandboxtest.Window{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("held:", verdict.Held)
	for _, rule := range verdict.Rules {
		if rule.Outcome == client.ClientRuleVerdictOutcomeBroken {
			shown := rule.Breaks[0].Requests
			fmt.Println(rule.Id, rule.Outcome, "by requests", shown[0].Request, "and", shown[1].Request)
		}
	}
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// held: false
	// CLI-6 broken by requests 1 and 2
}
