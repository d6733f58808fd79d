package client_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/openapi/client"
	"github.com/testcampaign/kit/openapi/openapitest"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

const testKey = "svc_test_generatedclient"

// retrying is what an SDK's transport does with a 429: wait as long as
// Retry-After says, then try again, a bounded number of times.
type retrying struct {
	next client.HttpRequestDoer
	// sleep waits; the test records the wait instead, since the planned
	// 429 is spent on one request and the retry needs no time to pass.
	sleep func(time.Duration)
}

func (r *retrying) Do(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		res, err := r.next.Do(req)
		if err != nil || res.StatusCode != http.StatusTooManyRequests || attempt == 2 {
			return res, err
		}
		seconds, err := strconv.Atoi(res.Header.Get("Retry-After"))
		if err != nil {
			return res, nil
		}
		res.Body.Close()
		r.sleep(time.Duration(seconds) * time.Second)
		if req.GetBody != nil {
			if req.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

func newClient(t *testing.T, url string, doer client.HttpRequestDoer) *client.ClientWithResponses {
	t.Helper()
	c, err := client.NewClientWithResponses(url, client.WithHTTPClient(doer),
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+testKey)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSDKFlow uses the generated client as an SDK team's tests would, against
// the sandbox, whose side of every exchange is also checked against the
// document by sandboxtest.
func TestSDKFlow(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.NewServer(t, sandboxtest.Options{})
	var waits []time.Duration
	transport := &retrying{next: srv.Client(), sleep: func(d time.Duration) { waits = append(waits, d) }}
	c := newClient(t, srv.URL, transport)

	t.Run("create and get a campaign", func(t *testing.T) {
		created, err := c.CreateCampaignWithResponse(ctx, client.CampaignCreate{
			Name: "SDK flow", Platform: client.PlatformIos, TestersRequired: 5, RewardPerBug: 19.99,
		})
		if err != nil || created.JSON200 == nil {
			t.Fatalf("create campaign: %v, %d %s", err, created.StatusCode(), created.Body)
		}
		got, err := c.GetCampaignWithResponse(ctx, created.JSON200.Data.Id)
		if err != nil || got.JSON200 == nil {
			t.Fatalf("get campaign: %v, %d %s", err, got.StatusCode(), got.Body)
		}
		want := created.JSON200.Data
		if want.Status != client.CampaignStatusDraft || want.RewardPerBug != 19.99 {
			t.Errorf("created campaign = %+v, want a draft rewarding 19.99", want)
		}
		if diff := cmp.Diff(want, got.JSON200.Data); diff != "" {
			t.Errorf("got campaign differs from created one (-created +got):\n%s", diff)
		}
	})

	t.Run("list every page", func(t *testing.T) {
		limit := 2
		params := &client.ListCampaignsParams{Limit: &limit}
		seen := map[string]bool{}
		pages := 0
		for {
			page, err := c.ListCampaignsWithResponse(ctx, params)
			if err != nil || page.JSON200 == nil {
				t.Fatalf("list campaigns: %v, %d %s", err, page.StatusCode(), page.Body)
			}
			pages++
			for _, item := range page.JSON200.Data.Items {
				if seen[item.Id] {
					t.Errorf("campaign %s listed twice", item.Id)
				}
				seen[item.Id] = true
			}
			if !page.JSON200.Data.HasMore {
				break
			}
			params.Cursor = page.JSON200.Data.NextCursor
		}
		all, err := c.ListCampaignsWithResponse(ctx, &client.ListCampaignsParams{Limit: new(100)})
		if err != nil || all.JSON200 == nil {
			t.Fatalf("list campaigns: %v", err)
		}
		if got, want := len(seen), len(all.JSON200.Data.Items); got != want || pages < 2 {
			t.Errorf("paged through %d campaigns on %d pages, want %d on several", got, pages, want)
		}
	})

	t.Run("a bug through its lifecycle, with one refused move", func(t *testing.T) {
		list, err := c.ListBugsWithResponse(ctx, &client.ListBugsParams{Status: new(client.BugStatusNew), Limit: new(1)})
		if err != nil || list.JSON200 == nil || len(list.JSON200.Data.Items) == 0 {
			t.Fatalf("list new bugs: %v", err)
		}
		id := list.JSON200.Data.Items[0].Id
		steps := []struct {
			patch      client.BugPatch
			wantStatus int
			wantBug    client.BugStatus
		}{
			{client.BugPatch{Status: new(client.BugStatusConfirmed)}, 200, client.BugStatusConfirmed},
			{client.BugPatch{Status: new(client.BugStatusInProgress)}, 200, client.BugStatusInProgress},
			{client.BugPatch{Status: new(client.BugStatusResolved)}, 409, client.BugStatusInProgress},
			{client.BugPatch{Status: new(client.BugStatusResolved), Resolution: new(client.ResolutionFixed)}, 200, client.BugStatusResolved},
			{client.BugPatch{Status: new(client.BugStatusClosed)}, 200, client.BugStatusClosed},
		}
		for _, step := range steps {
			res, err := c.UpdateBugWithResponse(ctx, id, step.patch)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode() != step.wantStatus {
				t.Fatalf("PATCH %s to %s = %d, want %d: %s", id, *step.patch.Status, res.StatusCode(), step.wantStatus, res.Body)
			}
			if res.JSON409 != nil && res.JSON409.Error.Code != client.ErrorCodeINVALIDSTATUSTRANSITION {
				t.Errorf("refused move: code %s, want INVALID_STATUS_TRANSITION", res.JSON409.Error.Code)
			}
			if res.JSON200 != nil && res.JSON200.Data.Status != step.wantBug {
				t.Errorf("bug status after the move = %s, want %s", res.JSON200.Data.Status, step.wantBug)
			}
		}
	})

	t.Run("register a webhook and receive a delivery", func(t *testing.T) {
		doc := openapitest.Default(t)
		deliveries := make(chan client.BugCreatedEvent, 1)
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			for _, v := range doc.CheckWebhook("bug.created", r, body) {
				t.Errorf("delivery breaks the document's bug.created webhook: %s", v)
			}
			var event client.BugCreatedEvent
			if err := json.Unmarshal(body, &event); err != nil {
				http.Error(w, "not an event", http.StatusBadRequest)
				return
			}
			select {
			case deliveries <- event:
			default:
			}
		}))
		t.Cleanup(receiver.Close)

		hook, err := c.CreateWebhookWithResponse(ctx, client.WebhookCreate{
			Url: receiver.URL + "/hooks", Events: []client.EventFilter{client.EventFilterBugCreated},
		})
		if err != nil || hook.JSON200 == nil {
			t.Fatalf("register webhook: %v, %d %s", err, hook.StatusCode(), hook.Body)
		}
		if got := hook.JSON200.Data.Secret; !strings.HasPrefix(got, "whsec_") {
			t.Errorf("secret %q does not start with whsec_", got)
		}
		filed, err := c.FileBugWithResponse(ctx, client.BugCreate{CampaignId: "cmp_000001", Title: "Crash on launch", Severity: client.SeverityHigh})
		if err != nil || filed.JSON200 == nil {
			t.Fatalf("file bug: %v, %d %s", err, filed.StatusCode(), filed.Body)
		}
		select {
		case got := <-deliveries:
			if got.Type != client.BugCreatedEventTypeBugCreated || got.Data.Id != filed.JSON200.Data.Id {
				t.Errorf("delivery = %+v, want bug.created for %s", got, filed.JSON200.Data.Id)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no delivery within 5s")
		}
		settled, err := c.SettleDeliveriesWithResponse(ctx, client.SettleDeliveriesJSONRequestBody{})
		if err != nil || settled.JSON200 == nil || !settled.JSON200.Data.Settled {
			t.Fatalf("settle deliveries: %v, %d %s", err, settled.StatusCode(), settled.Body)
		}
		listed, err := c.ListDeliveriesWithResponse(ctx, nil)
		if err != nil || listed.JSON200 == nil || len(listed.JSON200.Data.Items) == 0 {
			t.Fatalf("list deliveries: %v, %d %s", err, listed.StatusCode(), listed.Body)
		}
		// The generated types keep every key the sandbox sends: a delivery
		// no fault touched has "fault": null, not no fault at all (FAULT-39).
		again, err := json.Marshal(listed.JSON200.Data.Items)
		if err != nil {
			t.Fatal(err)
		}
		var sent struct {
			Data struct{ Items []map[string]json.RawMessage }
		}
		var kept []map[string]json.RawMessage
		if err := json.Unmarshal(listed.Body, &sent); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &kept); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(keysOf(sent.Data.Items), keysOf(kept)); diff != "" {
			t.Errorf("keys of the deliveries decoded and encoded again with the generated types (-sent +kept):\n%s", diff)
		}
	})

	t.Run("a 429 with Retry-After is waited out", func(t *testing.T) {
		status := http.StatusTooManyRequests
		plan, err := c.PlanFaultsWithResponse(ctx, client.FaultPlanCreate{Status: &status})
		if err != nil || plan.JSON200 == nil {
			t.Fatalf("plan a 429: %v, %d %s", err, plan.StatusCode(), plan.Body)
		}
		waits = nil
		res, err := c.GetCampaignWithResponse(ctx, "cmp_000001")
		if err != nil || res.JSON200 == nil {
			t.Fatalf("get campaign after a 429: %v, %d %s", err, res.StatusCode(), res.Body)
		}
		if diff := cmp.Diff([]time.Duration{time.Second}, waits); diff != "" {
			t.Errorf("waits before retrying (-want +got):\n%s", diff)
		}
	})
	t.Run("an injected HTTP-date Retry-After is read as it came", func(t *testing.T) {
		const date = "Wed, 21 Oct 2026 07:28:00 GMT"
		plain := newClient(t, srv.URL, srv.Client())
		for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
			var retryAfter client.FaultPlanCreate_RetryAfter
			if err := retryAfter.FromFaultPlanCreateRetryAfter1(date); err != nil {
				t.Fatal(err)
			}
			plan, err := plain.PlanFaultsWithResponse(ctx, client.FaultPlanCreate{Path: new("/v1/testers"), Status: &status, RetryAfter: &retryAfter})
			if err != nil || plan.JSON200 == nil {
				t.Fatalf("plan a %d: %v, %d %s", status, err, plan.StatusCode(), plan.Body)
			}
			res, err := plain.ListTestersWithResponse(ctx, nil)
			if err != nil {
				t.Fatalf("the injected %d does not parse: %v", status, err)
			}
			var got string
			switch {
			case res.Headers429 != nil:
				got = res.Headers429.RetryAfter
			case res.Headers5XX != nil && res.Headers5XX.RetryAfter != nil:
				got = *res.Headers5XX.RetryAfter
			}
			if got != date {
				t.Errorf("the injected %d's Retry-After reads %q, want %q", status, got, date)
			}
		}
	})
}

// keysOf lists each object's keys, in order.
func keysOf(objects []map[string]json.RawMessage) [][]string {
	keys := make([][]string, len(objects))
	for i, o := range objects {
		keys[i] = slices.Sorted(maps.Keys(o))
	}
	return keys
}
