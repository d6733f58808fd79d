package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/fixtures"
	"github.com/testcampaign/kit/sandbox"
)

func TestSchemaIsValid(t *testing.T) {
	if err := schema().Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := memdb.NewMemDB(schema()); err != nil {
		t.Fatal(err)
	}
}

var origin = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

func newTemplate(t testing.TB, limits Limits) (*Template, sandbox.Seed) {
	t.Helper()
	seed, err := fixtures.Load(fixtures.Default())
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := NewTemplate(seed, limits)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl, seed
}

func openDB(t testing.TB, opts Options) *DB {
	t.Helper()
	tmpl, _ := newTemplate(t, DefaultLimits)
	return tmpl.Open("acct-1", sandbox.NewFrozenClock(origin), opts)
}

func TestEventsAreAnnouncedOnlyAfterCommit(t *testing.T) {
	var mu sync.Mutex
	var heard []sandbox.Event
	var db *DB
	db = openDB(t, Options{OnEvent: func(_ context.Context, e sandbox.Event, hooks []sandbox.Webhook) {
		if len(hooks) != 1 || hooks[0].URL != "http://127.0.0.1:1/campaigns" {
			t.Errorf("event %s announced to %+v, want the campaign webhook alone", e.ID, hooks)
		}
		// The event's write must be visible when the listener hears it.
		page, err := db.Events(t.Context(), sandbox.PageRequest{Limit: 1})
		if err != nil || len(page.Items) != 1 || page.Items[0].ID != e.ID {
			t.Errorf("listener heard %s before it was readable: %v, %v", e.ID, page.Items, err)
		}
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, e)
	}})
	// Only events that a webhook subscribes to are announced.
	if _, err := db.CreateWebhook(t.Context(), sandbox.WebhookInput{URL: "http://127.0.0.1:1/campaigns", Events: []string{sandbox.EventCampaignCreated}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FileBug(t.Context(), sandbox.BugInput{CampaignID: "cmp_000001", Title: "t", Severity: "low"}); err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCampaign(t.Context(), sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"})
	if err != nil {
		t.Fatal(err)
	}
	resolved := "fixed"
	if _, err := db.UpdateBug(t.Context(), "bug_000009", sandbox.BugPatch{Resolution: &resolved}); err == nil {
		t.Fatal("a resolution on a new bug was accepted")
	}
	if _, err := db.UpdateBug(t.Context(), "bug_999999", sandbox.BugPatch{Resolution: &resolved}); sandbox.AsError(err).Code != sandbox.ErrNotFound {
		t.Fatalf("unknown bug: %v", err)
	}
	page, err := db.Events(t.Context(), sandbox.PageRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 1 || heard[0].Type != sandbox.EventCampaignCreated || len(page.Items) != 2 {
		t.Fatalf("heard %v, stored %v; want campaign.created heard, and bug.created stored too", heard, page.Items)
	}
	if diff := cmp.Diff(page.Items[0], heard[0]); diff != "" {
		t.Errorf("announced event differs from stored (-stored +heard):\n%s", diff)
	}
	want := `{"id":"evt_000002","type":"campaign.created","createdAt":"2026-02-03T04:05:06.000Z","data":{"id":"` + c.ID + `",`
	if !strings.HasPrefix(string(heard[0].JSON), want) {
		t.Errorf("event JSON %s does not start with %s", heard[0].JSON, want)
	}
}

func TestRefusedWriteChangesNothing(t *testing.T) {
	db := openDB(t, Options{})
	snapshot := func() any {
		bugs, _ := db.Bugs(t.Context(), sandbox.BugFilter{}, sandbox.PageRequest{Limit: 100})
		events, _ := db.Events(t.Context(), sandbox.PageRequest{Limit: 100})
		return []any{bugs, events}
	}
	before := snapshot()
	closed := "closed"
	if _, err := db.UpdateBug(t.Context(), "bug_000009", sandbox.BugPatch{Status: &closed}); err == nil {
		t.Fatal("closing without a resolution was accepted")
	}
	if _, err := db.FileBug(t.Context(), sandbox.BugInput{CampaignID: "cmp_999999", Title: "t", Severity: "low"}); sandbox.AsError(err).Code != sandbox.ErrValidation {
		t.Fatalf("a bug on an unknown campaign: %v, want VALIDATION_ERROR", err)
	}
	if _, err := db.FileBug(t.Context(), sandbox.BugInput{CampaignID: "cmp_000001", TesterID: "tst_999", Title: "t", Severity: "low"}); sandbox.AsError(err).Code != sandbox.ErrValidation {
		t.Fatalf("a bug by an unknown tester: %v, want VALIDATION_ERROR", err)
	}
	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("refused writes changed the store:\n%s", diff)
	}
	// A refused write must not use up an ID either, or IDs would depend on
	// failed requests.
	b, err := db.FileBug(t.Context(), sandbox.BugInput{CampaignID: "cmp_000001", Title: "t", Severity: "low"})
	if err != nil || b.ID != "bug_000010" {
		t.Errorf("next bug = %s, %v; want bug_000010", b.ID, err)
	}
}

func TestAccountsShareTheTemplateButNotTheirWrites(t *testing.T) {
	tmpl, seed := newTemplate(t, DefaultLimits)
	clock := sandbox.NewFrozenClock(origin)
	one, other := tmpl.Open("acct-1", clock, Options{}), tmpl.Open("acct-2", clock, Options{})
	confirmed := "confirmed"
	if _, err := one.UpdateBug(t.Context(), "bug_000009", sandbox.BugPatch{Status: &confirmed}); err != nil {
		t.Fatal(err)
	}
	if _, err := one.CreateCampaign(t.Context(), sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"}); err != nil {
		t.Fatal(err)
	}
	b, err := other.Bugs(t.Context(), sandbox.BugFilter{Status: "new"}, sandbox.PageRequest{Limit: 1})
	if err != nil || len(b.Items) != 1 || b.Items[0].ID != "bug_000009" {
		t.Errorf("the other account's bug changed: %+v, %v", b.Items, err)
	}
	if _, err := other.Campaign(t.Context(), "cmp_000006"); sandbox.AsError(err).Code != sandbox.ErrNotFound {
		t.Errorf("the other account sees a campaign it did not create: %v", err)
	}
	if fresh := tmpl.Open("acct-3", clock, Options{}); mustCount(t, fresh) != len(seed.Campaigns) {
		t.Errorf("a new account does not start from the seed alone")
	}
	if seed.Bugs[8].Status != "new" {
		t.Errorf("the seed itself changed to %s", seed.Bugs[8].Status)
	}
}

func mustCount(t *testing.T, db *DB) int {
	t.Helper()
	page, err := db.Campaigns(t.Context(), sandbox.CampaignFilter{}, sandbox.PageRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Items)
}

func TestSeededTimesFollowTheAccountsOrigin(t *testing.T) {
	tmpl, seed := newTemplate(t, DefaultLimits)
	for _, at := range []time.Time{origin, origin.Add(72 * time.Hour)} {
		db := tmpl.Open("acct", sandbox.NewFrozenClock(at), Options{})
		c, err := db.Campaign(t.Context(), "cmp_000001")
		if err != nil {
			t.Fatal(err)
		}
		if want := sandbox.At(at.Add(-seed.Campaigns[0].Age)); c.CreatedAt != want {
			t.Errorf("opened at %v: seeded campaign created %v, want %v", at, c.CreatedAt, want)
		}
	}
	clock := sandbox.NewFrozenClock(origin)
	db := tmpl.Open("acct", clock, Options{})
	clock.Advance(90 * time.Second)
	confirmed := "confirmed"
	b, err := db.UpdateBug(t.Context(), "bug_000009", sandbox.BugPatch{Status: &confirmed})
	if err != nil {
		t.Fatal(err)
	}
	if want := sandbox.At(origin.Add(-seed.Bugs[8].Age)); b.CreatedAt != want {
		t.Errorf("updated seeded bug created %v, want %v", b.CreatedAt, want)
	}
	if got, _ := db.Bugs(t.Context(), sandbox.BugFilter{Status: "confirmed"}, sandbox.PageRequest{Limit: 100}); !containsBug(got.Items, b) {
		t.Errorf("the list does not show the update as returned: %+v", got.Items)
	}
	if want := sandbox.At(origin.Add(90 * time.Second)); b.UpdatedAt != want {
		t.Errorf("updatedAt %v, want %v", b.UpdatedAt, want)
	}
}

func containsBug(bugs []sandbox.Bug, b sandbox.Bug) bool {
	for _, got := range bugs {
		if cmp.Equal(got, b) {
			return true
		}
	}
	return false
}

func TestLimits(t *testing.T) {
	seed := seed0(t)
	limits := Limits{Records: len(seed.Bugs) + 1, Webhooks: 2, Events: 3}
	tmpl, err := NewTemplate(seed, limits)
	if err != nil {
		t.Fatal(err)
	}
	db := tmpl.Open("acct", sandbox.NewFrozenClock(origin), Options{})
	in := sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"}
	created := 0
	for ; created <= limits.Records; created++ {
		if _, err := db.CreateCampaign(t.Context(), in); err != nil {
			if sandbox.AsError(err).Code != sandbox.ErrLimitReached {
				t.Fatalf("campaign past the cap: %v, want LIMIT_REACHED", err)
			}
			break
		}
	}
	if want := limits.Records - len(seed.Campaigns); created != want {
		t.Errorf("created %d campaigns before LIMIT_REACHED, want %d", created, want)
	}
	hook := sandbox.WebhookInput{URL: "http://127.0.0.1:1/h", Events: []string{"*"}}
	for i := range 3 {
		_, err := db.CreateWebhook(t.Context(), hook)
		if got, want := err != nil, i == 2; got != want {
			t.Errorf("webhook %d: %v", i+1, err)
		}
	}
	page, err := db.Events(t.Context(), sandbox.PageRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range page.Items {
		ids = append(ids, e.ID)
	}
	want := []string{formatID("evt", uint64(created)), formatID("evt", uint64(created-1)), formatID("evt", uint64(created-2))}
	if !cmp.Equal(ids, want) {
		t.Errorf("events kept %v, want the last 3 %v", ids, want)
	}
}

func seed0(t *testing.T) sandbox.Seed {
	t.Helper()
	seed, err := fixtures.Load(fixtures.Default())
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

func TestIDsAreCanonical(t *testing.T) {
	db := openDB(t, Options{})
	for _, id := range []string{"cmp_1", "cmp_0000001", "cmp_000000", "bug_000001", "cmp_-00001", "cmp_", ""} {
		if _, err := db.Campaign(t.Context(), id); sandbox.AsError(err).Code != sandbox.ErrNotFound {
			t.Errorf("Campaign(%q) = %v, want NOT_FOUND", id, err)
		}
	}
}

func TestFilteredPagesCoverEveryMatchOnce(t *testing.T) {
	db := openDB(t, Options{})
	for i := range 9 {
		severity := []string{"low", "high", "critical"}[i%3]
		if _, err := db.FileBug(t.Context(), sandbox.BugInput{CampaignID: "cmp_000002", Title: "t", Severity: severity}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []sandbox.BugFilter{
		{}, {Severity: "high"}, {CampaignID: "cmp_000002"}, {CampaignID: "cmp_000002", Severity: "critical"},
		{Status: "new"}, {TesterID: "tst_000001"}, {CampaignID: "cmp_000099"},
	} {
		all, err := db.Bugs(t.Context(), f, sandbox.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var walked []sandbox.Bug
		req := sandbox.PageRequest{Limit: 2}
		for {
			page, err := db.Bugs(t.Context(), f, req)
			if err != nil {
				t.Fatal(err)
			}
			walked = append(walked, page.Items...)
			if !page.HasMore {
				break
			}
			req.Before = page.Items[len(page.Items)-1].Seq
		}
		if diff := cmp.Diff(all.Items, walked, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("filter %+v: pages of 2 differ from one page (-one +pages):\n%s", f, diff)
		}
		for _, b := range all.Items {
			if !f.Match(&b) {
				t.Errorf("filter %+v returned %+v", f, b)
			}
		}
	}
}

func TestEventJSONIsValid(t *testing.T) {
	db := openDB(t, Options{})
	if _, err := db.CreateCampaign(t.Context(), sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1.50"}); err != nil {
		t.Fatal(err)
	}
	page, _ := db.Events(t.Context(), sandbox.PageRequest{Limit: 1})
	var decoded map[string]any
	if err := json.Unmarshal(page.Items[0].JSON, &decoded); err != nil {
		t.Fatalf("event JSON %s: %v", page.Items[0].JSON, err)
	}
	if !strings.Contains(string(page.Items[0].JSON), `"rewardPerBug":1.50`) {
		t.Errorf("event JSON %s does not keep 1.50", page.Items[0].JSON)
	}
}

func TestOldEventsArePruned(t *testing.T) {
	tmpl, err := NewTemplate(seed0(t), Limits{Events: 2})
	if err != nil {
		t.Fatal(err)
	}
	db := tmpl.Open("acct", sandbox.NewFrozenClock(origin), Options{})
	const writes = 10*blockSize + 5
	for range writes {
		if _, err := db.CreateCampaign(t.Context(), sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"}); err != nil {
			t.Fatal(err)
		}
	}
	it, err := db.db.Txn(false).Get(events.name, indexID+"_prefix")
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for raw := it.Next(); raw != nil; raw = it.Next() {
		held += len(raw.(*block[storedEvent]).recs)
	}
	if held > 2+blockSize {
		t.Errorf("%d events held, want at most %d", held, 2+blockSize)
	}
	page, _ := db.Events(t.Context(), sandbox.PageRequest{Limit: 100})
	if len(page.Items) != 2 || page.Items[0].ID != formatID("evt", writes) {
		t.Errorf("events listed: %d, newest %v", len(page.Items), page.Items)
	}
}

// The meter's charge for what an account writes must cover the heap the
// writes keep, or a shared -memory-budget bounds nothing, also when every
// bug names a campaign of its own, so that each costs a counts row and a
// postings list beyond its share of a block.
func TestTheMeterChargesAtLeastTheHeapKept(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap of 40,000 records")
	}
	for _, campaignPerBug := range []bool{false, true} {
		kept, charged := retainedPerRecord(t, 20_000, campaignPerBug)
		if charged < kept {
			t.Errorf("campaign per bug %v: charged %.0f B a record, the heap kept %.0f", campaignPerBug, charged, kept)
		}
	}
}

// An ID names a record only in formatID's spelling: every other spelling of
// its number is NOT_FOUND, so a client cannot reach one record by two IDs.
func TestOnlyTheCanonicalIDNamesARecord(t *testing.T) {
	ids := []string{"cmp_000001", "cmp_1", "cmp_00001", "cmp_0000001", "cmp_000000", "cmp_999999", "cmp_1000000",
		"cmp_01000000", "cmp_+00001", "cmp_-00001", "cmp_00_001", "cmp_0x0001", "cmp_000001 ", "cmp_", "bug_000001", "cmp000001",
		"cmp_18446744073709551615", "cmp_18446744073709551616", "cmp_٠٠٠٠٠١"}
	for seq := range uint64(2000) {
		ids = append(ids, fmt.Sprintf("cmp_%d", seq), fmt.Sprintf("cmp_%06d", seq), fmt.Sprintf("cmp_%08d", seq))
	}
	for _, id := range ids {
		digits, _ := strings.CutPrefix(id, "cmp_")
		want, err := strconv.ParseUint(digits, 10, 64)
		canonical := err == nil && want > 0 && formatID(campaigns.kind, want) == id
		seq, ok := parseID(campaigns, id)
		if ok != canonical || (ok && seq != want) {
			t.Errorf("parseID(%q) = %d, %v; want %d, %v", id, seq, ok, want, canonical)
		}
	}
}
