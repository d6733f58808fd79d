package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox"
)

// campaignBody is a campaign create named name, padded with an unknown field
// to at least size bytes.
func campaignBody(name string, size int) string {
	head := `{"name":"` + name + `","platform":"web","testersRequired":1,"rewardPerBug":1,"padding":"`
	return head + strings.Repeat("x", max(0, size-len(head)-2)) + `"}`
}

func campaignRequest(ctx context.Context, body string) *http.Request {
	r := httptest.NewRequestWithContext(ctx, "POST", "/v1/campaigns", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestLargeBodiesWaitForASlotAndSmallOnesDoNot(t *testing.T) {
	var held []*bytes.Buffer
	for range cap(largeBodies) {
		held = append(held, <-largeBodies)
	}
	small, err := parseBody(campaignRequest(t.Context(), campaignBody("small", 0)), sandbox.ParseCampaignInput)
	if err != nil || small.Name != "small" {
		t.Fatalf("a small body while every slot is taken: %+v, %v", small, err)
	}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = parseBody(campaignRequest(gone, campaignBody("large", largeBodyBytes)), sandbox.ParseCampaignInput)
	if sandbox.AsError(err).Code != sandbox.ErrRequestTimeout {
		t.Fatalf("a large body whose client left while every slot was taken: %v, want REQUEST_TIMEOUT", err)
	}
	for _, buf := range held {
		largeBodies <- buf
	}

	// A slot's buffer serves the next large body; what the first one
	// decoded to is its own.
	first, err := parseBody(campaignRequest(t.Context(), campaignBody("first", MaxBodyBytes-10)), sandbox.ParseCampaignInput)
	if err != nil {
		t.Fatal(err)
	}
	second, err := parseBody(campaignRequest(t.Context(), campaignBody("second", largeBodyBytes)), sandbox.ParseCampaignInput)
	if err != nil {
		t.Fatal(err)
	}
	if first.Name != "first" || second.Name != "second" {
		t.Errorf("names %q and %q, want first and second", first.Name, second.Name)
	}
	if len(largeBodies) != cap(largeBodies) {
		t.Errorf("%d of %d slots free after the bodies were decoded", len(largeBodies), cap(largeBodies))
	}
}
