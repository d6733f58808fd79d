package sandboxtest_test

import (
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/openapi/client"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

var frozenAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// account is one key's account on a test sandbox: its controls, and a
// client of its /v1 API as the code under test would send requests.
type account struct {
	t       *testing.T
	baseURL string
	key     string
	ctl     *sandboxtest.Controls
}

func newAccount(t *testing.T, opts sandboxtest.Options) *account {
	t.Helper()
	srv := sandboxtest.NewServer(t, opts)
	key := "svc_test_" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return &account{t: t, baseURL: srv.URL, key: key, ctl: sandboxtest.NewControls(srv.URL, key)}
}

// send sends one /v1 request and returns the answer, its body read.
func (a *account) send(method, path, body string) (*http.Response, string) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.baseURL+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	read, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return res, string(read)
}

const checkout = `{"name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99}`

// campaigns returns how many campaigns the account lists.
func (a *account) campaigns() int {
	a.t.Helper()
	res, body := a.send("GET", "/v1/campaigns?limit=100", "")
	var page client.CampaignPageEnvelope
	if res.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &page) != nil {
		a.t.Fatalf("GET /v1/campaigns answered %d %s", res.StatusCode, body)
	}
	return len(page.Data.Items)
}

func TestPlanFaultShapesTheNextMatchingAnswer(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{})
	fault, err := a.ctl.PlanFault(t.Context(), client.FaultPlanCreate{
		Method: new(client.FaultMethodGET), Path: new("/v1/campaigns"), Status: new(503), Count: new(2),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fault.Id, "flt_") || fault.Count == nil || *fault.Count != 2 {
		t.Errorf("planned %+v, want an flt_ ID and a count of 2", fault)
	}
	if res, _ := a.send("POST", "/v1/campaigns", checkout); res.StatusCode != http.StatusOK {
		t.Errorf("POST /v1/campaigns answered %d: a GET fault hit it", res.StatusCode)
	}
	for range 2 {
		res, body := a.send("GET", "/v1/campaigns", "")
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("X-Sandbox-Fault") != fault.Id {
			t.Errorf("GET /v1/campaigns answered %d, X-Sandbox-Fault %q: %s; want 503 from %s",
				res.StatusCode, res.Header.Get("X-Sandbox-Fault"), body, fault.Id)
		}
	}
	if res, _ := a.send("GET", "/v1/campaigns", ""); res.StatusCode != http.StatusOK {
		t.Errorf("the third GET answered %d, want 200: the fault was for two", res.StatusCode)
	}
}

func TestPlanFaultReturnsTheRefusalAsAControlError(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{})
	_, err := a.ctl.PlanFault(t.Context(), client.FaultPlanCreate{Status: new(300)})
	var refused *sandboxtest.ControlError
	if !errors.As(err, &refused) {
		t.Fatalf("PlanFault with status 300 returned %v, want a *ControlError", err)
	}
	if refused.Status != http.StatusBadRequest || refused.Code != "VALIDATION_ERROR" || refused.Message == "" {
		t.Errorf("got %+v, want 400 VALIDATION_ERROR with a message", refused)
	}
	if len(refused.Details) != 1 || refused.Details[0].Field != "status" {
		t.Errorf("details %+v, want one, on status", refused.Details)
	}
	if !strings.Contains(err.Error(), "VALIDATION_ERROR") {
		t.Errorf("the error reads %q, without its code", err)
	}
}

func TestControlsOfAnUnknownKeyAreRefused(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{})
	_, err := sandboxtest.NewControls(a.baseURL, "svc_live_not_a_test_key").Faults(t.Context())
	var refused *sandboxtest.ControlError
	if !errors.As(err, &refused) || refused.Status != http.StatusUnauthorized || refused.Code != "INVALID_API_KEY" {
		t.Errorf("Faults with a live key returned %v, want 401 INVALID_API_KEY", err)
	}
}

func TestFaultsListsWhatIsStillPlannedAndClearFaultsDropsIt(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{})
	first, err := a.ctl.PlanFault(t.Context(), client.FaultPlanCreate{Path: new("/v1/testers"), Status: new(500), Count: new(2)})
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.ctl.PlanFault(t.Context(), client.FaultPlanCreate{Path: new("/v1/bugs*"), Network: new(client.NetworkFaultClose)})
	if err != nil {
		t.Fatal(err)
	}
	a.send("GET", "/v1/testers", "")

	planned, err := a.ctl.Faults(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type state struct {
		ID    string
		Left  int
		Fired int
	}
	var got []state
	for _, f := range planned {
		got = append(got, state{f.Id, *f.Count, f.Fired})
	}
	if diff := cmp.Diff([]state{{first.Id, 1, 1}, {second.Id, 1, 0}}, got); diff != "" {
		t.Errorf("planned faults, oldest first (-want +got):\n%s", diff)
	}

	cleared, err := a.ctl.ClearFaults(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cleared != 2 {
		t.Errorf("ClearFaults = %d, want 2", cleared)
	}
	if left, err := a.ctl.Faults(t.Context()); err != nil || len(left) != 0 {
		t.Errorf("after ClearFaults, Faults = %v, %v; want none", left, err)
	}
	for _, path := range []string{"/v1/testers", "/v1/bugs"} {
		if res, _ := a.send("GET", path, ""); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s answered %d after ClearFaults, want 200", path, res.StatusCode)
		}
	}
}

func TestRequestsPagesTheJournalNewestFirstAndCountRequestsCountsIt(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{})
	fault, err := a.ctl.PlanFault(t.Context(), client.FaultPlanCreate{Method: new(client.FaultMethodPOST), Status: new(503)})
	if err != nil {
		t.Fatal(err)
	}
	a.send("POST", "/v1/campaigns", checkout)
	a.send("GET", "/v1/testers", "")
	a.send("POST", "/v1/campaigns", strings.Replace(checkout, "Checkout", "Retry", 1))

	posts := sandboxtest.RequestFilter{Method: "POST", Path: "/v1/campaigns"}
	first, err := a.ctl.Requests(t.Context(), posts, sandboxtest.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 1 || !first.HasMore || first.NextCursor == nil {
		t.Fatalf("the first page of one holds %d, hasMore %v, cursor %v; want one and a cursor", len(first.Items), first.HasMore, first.NextCursor)
	}
	second, err := a.ctl.Requests(t.Context(), posts, sandboxtest.Page{Cursor: *first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Body   string
		Status int
		Fault  string
	}
	var got []entry
	for _, r := range append(first.Items, second.Items...) {
		e := entry{Body: r.Body, Status: *r.Status}
		if r.Fault != nil {
			e.Fault = r.Fault.Id
		}
		got = append(got, e)
	}
	want := []entry{
		{strings.Replace(checkout, "Checkout", "Retry", 1), 200, ""},
		{checkout, 503, fault.Id},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the POSTs, newest first, over two pages (-want +got):\n%s", diff)
	}
	if second.HasMore {
		t.Error("the second page says there is more")
	}

	for filter, want := range map[sandboxtest.RequestFilter]int{
		posts:                   2,
		{}:                      3,
		{Method: "GET"}:         1,
		{Path: "/v1/campaign*"}: 2,
		{Method: "DELETE"}:      0,
	} {
		got, err := a.ctl.CountRequests(t.Context(), filter)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("CountRequests(%+v) = %d, want %d", filter, got, want)
		}
	}
}

func TestClockReadsAndAdvancesAFrozenClock(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{Now: frozenAt})
	read, err := a.ctl.Clock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !read.Now.Equal(frozenAt) || !read.Frozen {
		t.Errorf("Clock = %+v, want %v, frozen", read, frozenAt)
	}
	now, err := a.ctl.AdvanceClock(t.Context(), 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := frozenAt.Add(90 * time.Second); !now.Equal(want) {
		t.Errorf("AdvanceClock(90s) = %v, want %v", now, want)
	}
	_, body := a.send("POST", "/v1/campaigns", checkout)
	if !strings.Contains(body, `"createdAt":"2026-01-01T00:01:30.000Z"`) {
		t.Errorf("a campaign created after the move: %s, want it created at 00:01:30", body)
	}
	if read, err := a.ctl.Clock(t.Context()); err != nil || !read.Now.Equal(now) {
		t.Errorf("Clock after the move = %+v, %v; want %v", read, err, now)
	}
}

func TestAdvanceClockOfARunningClockIsAConflict(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{})
	read, err := a.ctl.Clock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if read.Frozen || read.Now.IsZero() {
		t.Errorf("Clock = %+v, want a running clock's time", read)
	}
	_, err = a.ctl.AdvanceClock(t.Context(), time.Minute)
	var refused *sandboxtest.ControlError
	if !errors.As(err, &refused) || refused.Status != http.StatusConflict || refused.Code != "CONFLICT" {
		t.Errorf("AdvanceClock on a running clock returned %v, want 409 CONFLICT", err)
	}
}

func TestResetStartsTheAccountOver(t *testing.T) {
	a := newAccount(t, sandboxtest.Options{Now: frozenAt})
	seeded := a.campaigns()
	a.send("POST", "/v1/campaigns", checkout)
	if _, err := a.ctl.PlanFault(t.Context(), client.FaultPlanCreate{Status: new(500)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ctl.AdvanceClock(t.Context(), time.Hour); err != nil {
		t.Fatal(err)
	}

	if err := a.ctl.Reset(t.Context()); err != nil {
		t.Fatal(err)
	}
	if sent, err := a.ctl.CountRequests(t.Context(), sandboxtest.RequestFilter{}); err != nil || sent != 0 {
		t.Errorf("the journal after Reset holds %d, %v; want nothing", sent, err)
	}
	if read, err := a.ctl.Clock(t.Context()); err != nil || !read.Now.Equal(frozenAt) {
		t.Errorf("the clock after Reset reads %+v, %v; want %v", read, err, frozenAt)
	}
	if got := a.campaigns(); got != seeded {
		t.Errorf("after Reset the account lists %d campaigns, want the %d seeded: the planned 500 or the created one survived", got, seeded)
	}
}

func TestSettleWaitsForTheDeliveriesThatDeliveriesThenLists(t *testing.T) {
	var received atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	a := newAccount(t, sandboxtest.Options{})
	if res, body := a.send("POST", "/v1/webhooks", `{"url":"`+receiver.URL+`/hooks","events":["campaign.created"]}`); res.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/webhooks answered %d %s", res.StatusCode, body)
	}
	for range 2 {
		a.send("POST", "/v1/campaigns", checkout)
	}

	settled, err := a.ctl.Settle(t.Context(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := (sandboxtest.Settlement{Settled: true}); settled != want {
		t.Errorf("Settle = %+v, want %+v", settled, want)
	}
	if got := received.Load(); got != 2 {
		t.Errorf("the receiver got %d deliveries once settled, want 2", got)
	}

	first, err := a.ctl.Deliveries(t.Context(), sandboxtest.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 1 || first.NextCursor == nil {
		t.Fatalf("the first page of one holds %d, cursor %v; want one and a cursor", len(first.Items), first.NextCursor)
	}
	rest, err := a.ctl.Deliveries(t.Context(), sandboxtest.Page{Cursor: *first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range append(first.Items, rest.Items...) {
		if d.StatusCode != http.StatusNoContent || d.EventType != "campaign.created" || d.Url != receiver.URL+"/hooks" || d.NextAttemptAt != nil {
			t.Errorf("delivery %+v, want campaign.created answered 204 by the receiver, with no retry due", d)
		}
	}
	if n := len(first.Items) + len(rest.Items); n != 2 {
		t.Errorf("Deliveries lists %d attempts over two pages, want 2", n)
	}
}

func TestControlsReachATLSSandboxThroughWithHTTPClient(t *testing.T) {
	srv := httptest.NewUnstartedServer(sandboxtest.NewHandler(t, sandboxtest.Options{Now: frozenAt}))
	// The handshake the default client refuses is expected; its log line is not news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ctl := sandboxtest.NewControls(srv.URL, "svc_test_tls")
	if _, err := ctl.Clock(t.Context()); err == nil {
		t.Error("the default client trusted the test server's certificate")
	}
	read, err := ctl.WithHTTPClient(srv.Client()).Clock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !read.Now.Equal(frozenAt) {
		t.Errorf("Clock over TLS = %+v, want %v", read, frozenAt)
	}
}
