package store

import (
	"fmt"
	"slices"

	"github.com/testcampaign/kit/sandbox"
)

// seedTemplate writes the seed with times relative to an origin of zero. It
// writes in bulk: every block, postings chunk and count row once, full,
// where a record at a time would copy each of them again for every record
// that lands in it (a 200k-bug fixture set took seconds). What it stores is
// what the API's own inserts would have stored, record by record, as
// TestBulkSeedStoresWhatInsertsWould checks.
func seedTemplate(w *writeTxn, seed sandbox.Seed) error {
	ago := func(age interface{ Milliseconds() int64 }) sandbox.Time { return -sandbox.Time(age.Milliseconds()) }
	seededTesters := make([]sandbox.Tester, len(seed.Testers))
	for i, st := range seed.Testers {
		t := st.Tester
		t.Platforms = slices.Clone(t.Platforms)
		t.CreatedAt = ago(st.Age)
		t.Seq = uint64(i + 1)
		t.ID = formatID(testers.kind, t.Seq)
		seededTesters[i] = t
	}
	seededCampaigns := make([]sandbox.Campaign, len(seed.Campaigns))
	for i, sc := range seed.Campaigns {
		c := sc.Campaign
		c.CreatedAt = ago(sc.Age)
		c.Seq = uint64(i + 1)
		c.ID = formatID(campaigns.kind, c.Seq)
		seededCampaigns[i] = c
	}
	seededBugs := make([]sandbox.Bug, len(seed.Bugs))
	for i, sb := range seed.Bugs {
		b := sb.Bug
		if b.Resolution != nil {
			resolution := *b.Resolution
			b.Resolution = &resolution
		}
		b.CampaignID, b.TesterID = seededCampaigns[sb.CampaignIndex].ID, seededTesters[sb.TesterIndex].ID
		b.CreatedAt, b.UpdatedAt = ago(sb.Age), ago(sb.UpdatedAge)
		b.Seq = uint64(i + 1)
		b.ID = formatID(bugs.kind, b.Seq)
		seededBugs[i] = b
	}
	if err := bulkInsert(w, testers, seededTesters); err != nil {
		return err
	}
	if err := bulkInsert(w, campaigns, seededCampaigns); err != nil {
		return err
	}
	if err := bulkInsert(w, bugs, seededBugs); err != nil {
		return err
	}
	return w.countBugs(seededBugs)
}

// bulkInsert stores recs, whose sequence numbers run from 1 up, in the
// table, which must be empty, and files the full blocks in their postings
// lists.
func bulkInsert[T, F any](w *writeTxn, t table[T, F], recs []T) error {
	records := make([]*T, len(recs))
	for i, rec := range recs {
		s := stored(w.d, t, rec)
		if t.seq(s) != uint64(i+1) {
			return fmt.Errorf("seed %s %d as %s number %d", t.name, t.seq(s), t.name, i+1)
		}
		records[i] = s
	}
	for first := 0; first < len(records); first += blockSize {
		end := min(first+blockSize, len(records))
		b, err := newBlock(t, uint64(first/blockSize), records[first:end:end])
		if err != nil {
			return fmt.Errorf("seed %s: %w", t.name, err)
		}
		if err := w.Insert(t.name, b); err != nil {
			return fmt.Errorf("seed %s: %w", t.name, err)
		}
	}
	lists, seqs := postingsOf(t, records[:len(records)-len(records)%blockSize])
	if err := appendPostings(w, lists, seqs); err != nil {
		return fmt.Errorf("seed %s: %w", t.name, err)
	}
	return nil
}
