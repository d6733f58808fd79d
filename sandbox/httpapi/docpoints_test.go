package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// A 401 counts against no key's budget, so it carries no X-RateLimit-*
// header (docs/sdks.md).
func TestA401CarriesNoRateLimitHeaders(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	res := c.withKey("svc_live_not_accepted_here").do("GET", "/v1/campaigns", "")
	if res.status != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", res.status)
	}
	for name := range res.header {
		if strings.HasPrefix(name, "X-Ratelimit-") {
			t.Errorf("a 401 carries %s", name)
		}
	}
}

// Idempotency-Key is accepted and ignored: a POST sent twice with one key
// makes two records (README, docs/sdks.md).
func TestIdempotencyKeyIsIgnored(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	var ids []string
	for range 2 {
		res := c.do("POST", "/v1/campaigns", newCampaign, "Content-Type", "application/json", "Idempotency-Key", "one-key")
		var created struct{ ID string }
		if err := json.Unmarshal(res.env.Data, &created); err != nil || res.status != http.StatusOK {
			t.Fatalf("POST: %d %s", res.status, res.raw)
		}
		ids = append(ids, created.ID)
	}
	if ids[0] == ids[1] {
		t.Errorf("two POSTs with one Idempotency-Key made %q and %q, want two records", ids[0], ids[1])
	}
}

// A key whose secret is shorter than 12 characters is journaled as
// svc_test_… with no last four (docs/controls.md).
func TestAShortKeyIsJournaledWithoutItsLastFour(t *testing.T) {
	c := newClient(t, sandboxtest.Options{}).withKey("svc_test_short")
	c.ok("GET", "/v1/testers", "", nil)
	var page struct {
		Items []struct{ Headers map[string][]string }
	}
	c.ok("GET", "/_sandbox/requests?limit=1", "", &page)
	if got := page.Items[0].Headers["Authorization"]; len(got) != 1 || got[0] != "Bearer svc_test_…" {
		t.Errorf("Authorization journaled as %q, want Bearer svc_test_…", got)
	}
}
