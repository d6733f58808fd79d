package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox"
)

// roundTrip packs recs as one block and reads each back.
func roundTrip[T any](t *testing.T, c *codec[T], recs []*T) {
	t.Helper()
	p, err := c.packAll(recs)
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		if diff := cmp.Diff(*rec, c.unpackAt(p, i)); diff != "" {
			t.Errorf("record %d (-packed +read back):\n%s", i, diff)
		}
	}
}

func TestPackedRecordsReadBackAsWritten(t *testing.T) {
	fixed := "fixed"
	empty := ""
	roundTrip(t, bugCodec, []*sandbox.Bug{
		{ID: "bug_000001", CampaignID: "cmp_000001", TesterID: "tst_000002", Title: "Crash", Description: "", Severity: "high", Status: "new", CreatedAt: -86_400_000, UpdatedAt: 5, Seq: 1},
		{ID: "bug_000002", CampaignID: "cmp_000001", TesterID: "tst_000002", Title: "Ünïcode ✓", Description: "line\nbreak \"quoted\"", Severity: "low", Status: "resolved", Resolution: &fixed, CreatedAt: 1, UpdatedAt: 1 << 50, Seq: 2},
		{ID: "bug_000003", Title: "", Status: "closed", Resolution: &empty, Seq: 3},
	})
	roundTrip(t, campaignCodec, []*sandbox.Campaign{
		{ID: "cmp_000001", Name: "A", Platform: "ios", TestersRequired: 3, RewardPerBug: "0.5", Status: "draft", CreatedAt: -1, Seq: 1},
		{ID: "cmp_1234567", Name: "", Platform: "web", TestersRequired: 1 << 40, RewardPerBug: "1e3", Status: "active", CreatedAt: 1 << 62, Seq: 1234567},
	})
}

func FuzzPackedBugsReadBackAsWritten(f *testing.F) {
	f.Add("Crash", "Tap twice.", "fixed", true, int64(-5), int64(7))
	f.Add("", "", "", false, int64(0), int64(0))
	f.Fuzz(func(t *testing.T, title, description, resolution string, resolved bool, created, updated int64) {
		b := &sandbox.Bug{ID: "bug_000001", CampaignID: "cmp_000001", TesterID: "tst_000001", Title: title, Description: description,
			Severity: "high", Status: "new", CreatedAt: sandbox.Time(created), UpdatedAt: sandbox.Time(updated), Seq: 1}
		if resolved {
			b.Resolution = &resolution
		}
		other := *b
		other.Title, other.Description = description, title
		roundTrip(t, bugCodec, []*sandbox.Bug{b, &other, b})
	})
}

// A read from a packed block is on every GET and every page; its strings
// are slices of the block's text, so it must not allocate.
func TestReadingAPackedRecordAllocatesNothing(t *testing.T) {
	p, err := campaignCodec.packAll([]*sandbox.Campaign{{ID: "cmp_000001", Name: "Name", Platform: "ios", RewardPerBug: "1", Status: "draft", Seq: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = campaignCodec.unpackAt(p, 0) }); allocs != 0 {
		t.Errorf("unpacking a campaign made %v allocations, want 0", allocs)
	}
}

// Full blocks of campaigns and bugs are packed, the open block is not, and
// a bug updated in a packed block reads back changed with its neighbours
// unchanged.
func TestFullBlocksArePacked(t *testing.T) {
	db := openDB(t, Options{})
	ctx := t.Context()
	for range 2 * blockSize {
		if _, err := db.FileBug(ctx, sandbox.BugInput{CampaignID: "cmp_000001", Title: "t", Severity: "low"}); err != nil {
			t.Fatal(err)
		}
	}
	txn := db.db.Txn(false)
	full, err := fullBlockAt(txn, bugs, 0)
	if err != nil || full == nil || full.packed.words == nil || full.recs != nil {
		t.Fatalf("bug block 0 is %+v (%v), want it packed", full, err)
	}
	if open, err := openBlockOf[sandbox.Bug](txn, bugs.name); err != nil || open == nil || open.packed.words != nil {
		t.Fatalf("the open bug block is %+v (%v), want it unpacked", open, err)
	}
	before, err := db.Bugs(ctx, sandbox.BugFilter{}, sandbox.PageRequest{Limit: sandbox.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	status := sandbox.BugConfirmed
	updated, err := db.UpdateBug(ctx, "bug_000002", sandbox.BugPatch{Status: &status})
	if err != nil {
		t.Fatal(err)
	}
	after, err := db.Bugs(ctx, sandbox.BugFilter{}, sandbox.PageRequest{Limit: sandbox.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range before.Items {
		want := b
		if b.ID == updated.ID {
			want = updated
		}
		if diff := cmp.Diff(want, after.Items[i]); diff != "" {
			t.Errorf("bug %s after updating %s (-want +got):\n%s", b.ID, updated.ID, diff)
		}
	}
}
