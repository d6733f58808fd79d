package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/testcampaign/kit/openapi/client"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// The generated client against a sandbox: every request carries the key,
// and each answer is decoded by its status into JSON200, JSON409 and so on.
func ExampleNewClientWithResponses() {
	srv, err := sandboxtest.Start(sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
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
	ctx := context.Background()

	created, err := api.CreateCampaignWithResponse(ctx, client.CampaignCreate{
		Name: "Checkout", Platform: client.PlatformIos, TestersRequired: 10, RewardPerBug: 19.99,
	})
	if err != nil {
		log.Fatal(err)
	}
	campaign := created.JSON200.Data
	fmt.Println(campaign.Id, campaign.Status, campaign.CreatedAt.Format(time.RFC3339))

	// A closed bug cannot go back to new: the answer is a typed 409.
	moved, err := api.UpdateBugWithResponse(ctx, "bug_000001", client.BugPatch{Status: new(client.BugStatusNew)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(moved.StatusCode(), moved.JSON409.Error.Code)

	// Then the verdict on the client: it broke none of the client rules
	// (docs/contract.md, CLI), not retrying the 409 among them.
	judged, err := api.JudgeClientWithResponse(ctx, &client.JudgeClientParams{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("client rules held:", judged.JSON200.Data.Held)

	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// cmp_000005 draft 2026-01-01T00:00:00Z
	// 409 INVALID_STATUS_TRANSITION
	// client rules held: true
}
