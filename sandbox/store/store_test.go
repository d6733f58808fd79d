package store

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

func newStore(t *testing.T, opts ...Option) *Store {
	t.Helper()
	seed, err := fixtures.Load(fixtures.Default())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sandbox.NewFrozenClock(time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)), seed, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var account = sandbox.Account{ID: "acct-1", KeyHint: "svc_test_…"}

func TestEventsAreAnnouncedOnlyAfterCommit(t *testing.T) {
	var mu sync.Mutex
	var heard []sandbox.Event
	var s *Store
	s = newStore(t, WithEventListener(func(e sandbox.Event) {
		// The event's write must be visible when the listener hears it.
		if _, err := s.Events(e.AccountID, sandbox.PageRequest{Limit: 1}); err != nil {
			t.Error(err)
		}
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, e)
	}))
	if err := s.EnsureAccount(account); err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateCampaign(account.ID, sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"})
	if err != nil {
		t.Fatal(err)
	}
	resolved := "fixed"
	if _, err := s.UpdateBug(account.ID, "bug_000009", sandbox.BugPatch{Resolution: &resolved}); err == nil {
		t.Fatal("a resolution on a new bug was accepted")
	}
	if _, err := s.UpdateBug(account.ID, "bug_999999", sandbox.BugPatch{Resolution: &resolved}); sandbox.AsError(err).Code != sandbox.ErrNotFound {
		t.Fatalf("unknown bug: %v", err)
	}
	page, err := s.Events(account.ID, sandbox.PageRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 1 || heard[0].Type != sandbox.EventCampaignCreated || len(page.Items) != 1 {
		t.Fatalf("heard %v, stored %v; want only campaign.created", heard, page.Items)
	}
	if diff := cmp.Diff(page.Items[0], heard[0]); diff != "" {
		t.Errorf("announced event differs from stored (-stored +heard):\n%s", diff)
	}
	if want := `"id":"` + c.ID + `"`; !strings.Contains(string(heard[0].Data), want) {
		t.Errorf("event data %s lacks %s", heard[0].Data, want)
	}
}

func TestRefusedWriteChangesNothing(t *testing.T) {
	s := newStore(t)
	if err := s.EnsureAccount(account); err != nil {
		t.Fatal(err)
	}
	snapshot := func() any {
		bugs, _ := s.Bugs(account.ID, sandbox.BugFilter{}, sandbox.PageRequest{Limit: 100})
		events, _ := s.Events(account.ID, sandbox.PageRequest{Limit: 100})
		return []any{bugs, events}
	}
	before := snapshot()
	closed := "closed"
	if _, err := s.UpdateBug(account.ID, "bug_000009", sandbox.BugPatch{Status: &closed}); err == nil {
		t.Fatal("closing without a resolution was accepted")
	}
	if _, err := s.FileBug(account.ID, sandbox.BugInput{CampaignID: "cmp_999999", Title: "t", Severity: "low"}); err == nil {
		t.Fatal("a bug on an unknown campaign was accepted")
	}
	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("refused writes changed the store:\n%s", diff)
	}
	// A refused write must not use up an ID either, or IDs would depend on
	// failed requests.
	b, err := s.FileBug(account.ID, sandbox.BugInput{CampaignID: "cmp_000001", Title: "t", Severity: "low"})
	if err != nil || b.ID != "bug_000010" {
		t.Errorf("next bug = %s, %v; want bug_000010", b.ID, err)
	}
}

func TestConcurrentFirstUseSeedsOnce(t *testing.T) {
	s := newStore(t)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.EnsureAccount(account); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	testers, err := s.Testers(account.ID, sandbox.TesterFilter{}, sandbox.PageRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(testers.Items) != len(s.seed.Testers) {
		t.Errorf("%d testers after 50 concurrent first uses, want %d", len(testers.Items), len(s.seed.Testers))
	}
}

func TestSeedIsCopiedNotShared(t *testing.T) {
	s := newStore(t)
	other := sandbox.Account{ID: "acct-2"}
	for _, a := range []sandbox.Account{account, other} {
		if err := s.EnsureAccount(a); err != nil {
			t.Fatal(err)
		}
	}
	confirmed := "confirmed"
	if _, err := s.UpdateBug(account.ID, "bug_000009", sandbox.BugPatch{Status: &confirmed}); err != nil {
		t.Fatal(err)
	}
	b, err := s.Bugs(other.ID, sandbox.BugFilter{Status: "new"}, sandbox.PageRequest{Limit: 1})
	if err != nil || len(b.Items) != 1 || b.Items[0].ID != "bug_000009" {
		t.Errorf("the other account's bug changed: %+v, %v", b.Items, err)
	}
	if s.seed.Bugs[8].Status != "new" {
		t.Errorf("the seed itself changed to %s", s.seed.Bugs[8].Status)
	}
}

func TestFilteredPagesCoverEveryMatchOnce(t *testing.T) {
	s := newStore(t)
	if err := s.EnsureAccount(account); err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		severity := []string{"low", "high", "critical"}[i%3]
		if _, err := s.FileBug(account.ID, sandbox.BugInput{CampaignID: "cmp_000002", Title: "t", Severity: severity}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []sandbox.BugFilter{
		{}, {Severity: "high"}, {CampaignID: "cmp_000002"}, {CampaignID: "cmp_000002", Severity: "critical"}, {Status: "new"}, {TesterID: "tst_000001"},
	} {
		all, err := s.Bugs(account.ID, f, sandbox.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var walked []sandbox.Bug
		req := sandbox.PageRequest{Limit: 2}
		for {
			page, err := s.Bugs(account.ID, f, req)
			if err != nil {
				t.Fatal(err)
			}
			walked = append(walked, page.Items...)
			if !page.HasMore {
				break
			}
			req.Before = page.Items[len(page.Items)-1].Seq
		}
		if diff := cmp.Diff(all.Items, walked); diff != "" {
			t.Errorf("filter %+v: pages of 2 differ from one page (-one +pages):\n%s", f, diff)
		}
	}
}
