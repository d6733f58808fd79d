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

// A suite judges each test on its own part of its file's key: the verdict
// asked before the test gives the request it starts after.
func ExampleControls_Verdict_window() {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// One key per test file, so that files run in parallel judge apart.
	const key = "svc_test_checkout_test_go"
	ctx, ctl := context.Background(), sandboxtest.NewControls(srv.URL, key)
	get := func(path string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	get("/v1/campaigns/cmp_999999") // an earlier test's 404
	get("/v1/campaigns/cmp_999999") // sent again at once: CLI-9
	// Before the next test: where the key's history stands.
	before, err := ctl.Verdict(ctx, sandboxtest.Window{})
	if err != nil {
		log.Fatal(err)
	}
	get("/v1/testers") // the test's own calls
	// After it (in a test, ctl.RequireClientRulesHeld(t, window)):
	verdict, err := ctl.Verdict(ctx, sandboxtest.Window{After: before.LastRequest})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the file so far held:", before.Held)
	fmt.Println("the test held:", verdict.Held, "judging", verdict.Requests, "request")
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// the file so far held: false
	// the test held: true judging 1 request
}

// A receiver under a frozen clock checks each delivery's Webhook-Timestamp
// against the account's time, X-Sandbox-Now, not its own, which is far
// past 2026-01-01. Once Await returns, the delivery records already list
// the attempt it answered: no Settle is needed.
func ExampleReceiver() {
	srv, err := sandboxtest.Start(sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		log.Fatal(err)
	}
	// In a test, sandboxtest.NewReceiver(t), which the test's end closes.
	receiver := sandboxtest.StartReceiver()
	defer receiver.Close()
	api, err := client.NewClientWithResponses(srv.URL, client.WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer svc_test_example")
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	registered, err := api.CreateWebhookWithResponse(ctx, client.WebhookCreate{
		Url: receiver.URL, Events: []client.EventFilter{client.EventFilterCampaignCreated},
	})
	if err != nil {
		log.Fatal(err)
	}
	receiver.SetSecret(registered.JSON200.Data.Secret)
	// A new campaign sends campaign.created to the receiver.
	_, err = api.CreateCampaignWithResponse(ctx, client.CampaignCreate{
		Name: "Checkout", Platform: client.PlatformIos, TestersRequired: 10, RewardPerBug: 19.99,
	})
	if err != nil {
		log.Fatal(err)
	}
	got, err := receiver.Await(ctx, 1)
	if err != nil {
		log.Fatal(err)
	}
	now, err := sandboxtest.SandboxNow(got[0].Header)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verified:", got[0].Err == nil, "answered:", got[0].Status, "account's now:", now.UTC().Format(time.RFC3339))
	records, err := sandboxtest.NewControls(srv.URL, "svc_test_example").Deliveries(ctx, sandboxtest.Page{Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("on record:", records.Items[0].EventType, records.Items[0].StatusCode)
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// verified: true answered: 204 account's now: 2026-01-01T00:00:00Z
	// on record: campaign.created 204
}

// The write whose answer was lost: the sandbox creates the campaign, then
// drops the connection. The client gets no answer, yet the journal says the
// POST was carried out and the campaign is there, so an SDK that sent the
// POST again would make a second one.
func ExampleLostAnswer() {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, ctl := context.Background(), sandboxtest.NewControls(srv.URL, "svc_test_example")
	_, err = ctl.PlanFault(ctx, sandboxtest.On(sandboxtest.LostAnswer(), client.FaultMethodPOST, "/v1/campaigns"))
	if err != nil {
		log.Fatal(err)
	}
	api, err := client.NewClientWithResponses(srv.URL, client.WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer svc_test_example")
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	// Your SDK's POST goes here; the generated client stands in for it.
	_, err = api.CreateCampaignWithResponse(ctx, client.CampaignCreate{
		Name: "Lost answer", Platform: client.PlatformIos, TestersRequired: 1, RewardPerBug: 1,
	})
	fmt.Println("client got an answer:", err == nil)
	journal, err := ctl.Requests(ctx, sandboxtest.RequestFilter{Method: "POST", Path: "/v1/campaigns"}, sandboxtest.Page{Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	entry := journal.Items[0]
	fmt.Println("carried out:", entry.CarriedOut, "API's status:", *entry.Status, "client received:", entry.Received)
	listed, err := api.ListCampaignsWithResponse(ctx, &client.ListCampaignsParams{})
	if err != nil {
		log.Fatal(err)
	}
	made := 0
	for _, c := range listed.JSON200.Data.Items {
		if c.Name == "Lost answer" {
			made++
		}
	}
	fmt.Println("campaigns made:", made)
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// client got an answer: false
	// carried out: true API's status: 200 client received: nothing
	// campaigns made: 1
}

// A 503 with Retry-After: 2 on the next GET of /v1/campaigns, to test a
// client's retry logic; the request after it is answered as usual.
func ExampleStatusFault() {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, ctl := context.Background(), sandboxtest.NewControls(srv.URL, "svc_test_example")
	fault := sandboxtest.On(sandboxtest.RetryAfter(sandboxtest.StatusFault(503), 2), client.FaultMethodGET, "/v1/campaigns")
	if _, err := ctl.PlanFault(ctx, fault); err != nil {
		log.Fatal(err)
	}
	// Your SDK's calls go here; plain requests stand in for them.
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
		fmt.Println(res.StatusCode, "Retry-After:", res.Header.Values("Retry-After"))
	}
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 503 Retry-After: [2]
	// 200 Retry-After: []
}

// A client that gives up while a 30 s delay holds its POST back: the
// sandbox never carries the request out, and the journal says so, so the
// SDK may send it again without making the campaign twice. The client here
// gives up once the journal shows its request held, as a timeout would.
func ExampleDelayFault() {
	srv, err := sandboxtest.Start(sandboxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, ctl := context.Background(), sandboxtest.NewControls(srv.URL, "svc_test_example")
	_, err = ctl.PlanFault(ctx, sandboxtest.On(sandboxtest.DelayFault(30*time.Second), client.FaultMethodPOST, "/v1/campaigns"))
	if err != nil {
		log.Fatal(err)
	}
	api, err := client.NewClientWithResponses(srv.URL, client.WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer svc_test_example")
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	// Your SDK's POST goes here; the generated client stands in for it.
	sending, giveUp := context.WithCancel(ctx)
	answered := make(chan error, 1)
	go func() {
		_, err := api.CreateCampaignWithResponse(sending, client.CampaignCreate{
			Name: "Held back", Platform: client.PlatformIos, TestersRequired: 1, RewardPerBug: 1,
		})
		answered <- err
	}()
	// The journal's newest POST /v1/campaigns, or none yet.
	lastPost := func() (entry client.LoggedRequest) {
		journal, err := ctl.Requests(ctx, sandboxtest.RequestFilter{Method: "POST", Path: "/v1/campaigns"}, sandboxtest.Page{Limit: 1})
		if err != nil {
			log.Fatal(err)
		}
		if len(journal.Items) > 0 {
			entry = journal.Items[0]
		}
		return entry
	}
	for entry := lastPost(); entry.Fault == nil; entry = lastPost() {
	}
	giveUp()
	fmt.Println("client got an answer:", <-answered == nil)
	entry := lastPost()
	for ; entry.Pending; entry = lastPost() {
	}
	fmt.Println("held for:", entry.Fault.DelayMs, "ms; carried out:", entry.CarriedOut, "client received:", entry.Received)
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// client got an answer: false
	// held for: 30000 ms; carried out: false client received: nothing
}
