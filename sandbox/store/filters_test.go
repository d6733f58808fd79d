package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/testcampaign/kit/sandbox"
)

// allPages walks a list in pages of size, as a client following nextCursor.
func allPages[T any](t *testing.T, size int, read func(sandbox.PageRequest) (sandbox.Page[T], error), seqOf func(T) uint64) []T {
	t.Helper()
	var all []T
	req := sandbox.PageRequest{Limit: size}
	for {
		page, err := read(req)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Items...)
		if !page.HasMore {
			return all
		}
		req.Before = seqOf(page.Items[len(page.Items)-1])
	}
}

// requireOpenBlock fails the test unless the table has an open block, so
// that lists must join the records not yet filed with those filed.
func requireOpenBlock[T, F any](t *testing.T, db *DB, table table[T, F]) {
	t.Helper()
	open, err := openBlockOf[T](db.db.Txn(false), table.name)
	if err != nil || open == nil {
		t.Fatalf("%s has no open block (%v)", table.name, err)
	}
}

// TestFiltersAgreeWithAWalkOfEveryRecord checks the postings lists, and the
// counts, against the filters' own Match over every bug, after enough
// writes and moves that lists fill, split and shrink, and with the newest
// bugs not yet filed.
func TestFiltersAgreeWithAWalkOfEveryRecord(t *testing.T) {
	db := openDB(t, Options{})
	ctx := t.Context()
	rnd := rand.New(rand.NewPCG(1, 2))
	pick := func(list []string) string { return list[rnd.IntN(len(list))] }
	campaignIDs := []string{"cmp_000001", "cmp_000002", "cmp_000003", "cmp_000004"}
	testerIDs := []string{"tst_000001", "tst_000002", "tst_000003", "tst_000004", "tst_000005", "tst_000006"}
	for range 6*chunkSize + blockSize/2 {
		in := sandbox.BugInput{CampaignID: pick(campaignIDs), TesterID: pick(testerIDs), Title: "t", Severity: pick(sandbox.Severities)}
		if _, err := db.FileBug(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	fixed := "fixed"
	for range 8 * chunkSize {
		status := pick(sandbox.BugStatuses)
		patch := sandbox.BugPatch{Status: &status}
		if status == sandbox.BugResolved || status == sandbox.BugClosed {
			patch.Resolution = &fixed
		}
		// Moves the lifecycle refuses are part of the mix: they must
		// leave the lists alone.
		_, err := db.UpdateBug(ctx, formatID(bugs.kind, 1+rnd.Uint64N(6*chunkSize+blockSize/2)), patch)
		if err != nil && sandbox.AsError(err).Code != sandbox.ErrInvalidStatusTransition {
			t.Fatal(err)
		}
	}
	requireOpenBlock(t, db, bugs)
	bugSeq := func(b sandbox.Bug) uint64 { return b.Seq }
	every := allPages(t, 100, func(p sandbox.PageRequest) (sandbox.Page[sandbox.Bug], error) {
		return db.Bugs(ctx, sandbox.BugFilter{}, p)
	}, bugSeq)
	var filters []sandbox.BugFilter
	for _, c := range append(campaignIDs[:2:2], "") {
		for _, s := range append(sandbox.BugStatuses[:3:3], "") {
			for _, v := range []string{"critical", "low", ""} {
				filters = append(filters, sandbox.BugFilter{CampaignID: c, Status: s, Severity: v}, sandbox.BugFilter{TesterID: "tst_000002", Status: s, Severity: v})
			}
		}
	}
	filters = append(filters, sandbox.BugFilter{CampaignID: "cmp_000099"}, sandbox.BugFilter{TesterID: "tst_000099", Status: "new"})
	for _, f := range filters {
		var want []sandbox.Bug
		for _, b := range every {
			if f.Match(&b) {
				want = append(want, b)
			}
		}
		got := allPages(t, 7, func(p sandbox.PageRequest) (sandbox.Page[sandbox.Bug], error) { return db.Bugs(ctx, f, p) }, bugSeq)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("filter %+v (-walk +postings):\n%s", f, diff)
		}
	}
	for _, campaign := range append(campaignIDs, "") {
		want := sandbox.NewBugStats()
		for _, b := range every {
			if campaign == "" || b.CampaignID == campaign {
				want.Total++
				want.ByStatus[b.Status]++
				want.BySeverity[b.Severity]++
			}
		}
		got, err := db.Analytics(ctx, campaign)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.Bugs); diff != "" {
			t.Errorf("analytics of %q (-walk +counts):\n%s", campaign, diff)
		}
	}
}

func TestCampaignAndTesterFiltersAgreeWithAWalk(t *testing.T) {
	db := openDB(t, Options{})
	ctx := t.Context()
	for i := range 3 * chunkSize {
		in := sandbox.CampaignInput{Name: "n", Platform: sandbox.Platforms[i%len(sandbox.Platforms)], TestersRequired: 1, RewardPerBug: "1"}
		if _, err := db.CreateCampaign(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	requireOpenBlock(t, db, campaigns)
	requireOpenBlock(t, db, testers)
	campaignSeq := func(c sandbox.Campaign) uint64 { return c.Seq }
	everyCampaign := allPages(t, 100, func(p sandbox.PageRequest) (sandbox.Page[sandbox.Campaign], error) {
		return db.Campaigns(ctx, sandbox.CampaignFilter{}, p)
	}, campaignSeq)
	for _, status := range append(sandbox.CampaignStatuses, "") {
		for _, platform := range append(sandbox.Platforms, "") {
			f := sandbox.CampaignFilter{Status: status, Platform: platform}
			var want []sandbox.Campaign
			for _, c := range everyCampaign {
				if f.Match(&c) {
					want = append(want, c)
				}
			}
			got := allPages(t, 9, func(p sandbox.PageRequest) (sandbox.Page[sandbox.Campaign], error) { return db.Campaigns(ctx, f, p) }, campaignSeq)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("filter %+v (-walk +postings):\n%s", f, diff)
			}
		}
	}
	testerSeq := func(t sandbox.Tester) uint64 { return t.Seq }
	everyTester := allPages(t, 100, func(p sandbox.PageRequest) (sandbox.Page[sandbox.Tester], error) {
		return db.Testers(ctx, sandbox.TesterFilter{}, p)
	}, testerSeq)
	for _, platform := range sandbox.Platforms {
		f := sandbox.TesterFilter{Platform: platform}
		var want []sandbox.Tester
		for _, tester := range everyTester {
			if f.Match(&tester) {
				want = append(want, tester)
			}
		}
		got := allPages(t, 2, func(p sandbox.PageRequest) (sandbox.Page[sandbox.Tester], error) { return db.Testers(ctx, f, p) }, testerSeq)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("filter %+v (-walk +postings):\n%s", f, diff)
		}
	}
}

// tickingClock moves a millisecond every time it is read, as a real clock
// may between two readings.
type tickingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

func TestARecordAndItsEventShareOneInstant(t *testing.T) {
	tmpl, _ := newTemplate(t, DefaultLimits)
	db := tmpl.Open("acct", &tickingClock{now: origin}, Options{})
	c, err := db.CreateCampaign(t.Context(), sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := db.Events(t.Context(), sandbox.PageRequest{Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatal(page, err)
	}
	want := fmt.Sprintf(`"createdAt":"%s","data":{"id":"%s"`, c.CreatedAt, c.ID)
	if !strings.Contains(string(page.Items[0].JSON), want) {
		t.Errorf("event %s, want it stamped as its campaign: %s", page.Items[0].JSON, want)
	}
}

func TestAWriteWhoseCallerHasGoneWritesNothing(t *testing.T) {
	db := openDB(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := db.CreateCampaign(ctx, sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("write after cancel: %v, want context.Canceled", err)
	}
	if _, err := db.Campaign(t.Context(), "cmp_000006"); sandbox.AsError(err).Code != sandbox.ErrNotFound {
		t.Errorf("the cancelled write stored a campaign: %v", err)
	}
}
