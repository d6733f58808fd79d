package store

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// seedOneByOne is what seeding did before it wrote in bulk, and what the
// API's writes do: one insert, with its postings and counts, per record.
func seedOneByOne(w *writeTxn, seed sandbox.Seed) error {
	ago := func(age interface{ Milliseconds() int64 }) sandbox.Time { return -sandbox.Time(age.Milliseconds()) }
	for i, st := range seed.Testers {
		t := st.Tester
		t.Platforms = slices.Clone(t.Platforms)
		t.CreatedAt, t.Seq, t.ID = ago(st.Age), uint64(i+1), formatID(testers.kind, uint64(i+1))
		if _, err := insert(w, testers, t, 0); err != nil {
			return err
		}
	}
	for i, sc := range seed.Campaigns {
		c := sc.Campaign
		c.CreatedAt, c.Seq, c.ID = ago(sc.Age), uint64(i+1), formatID(campaigns.kind, uint64(i+1))
		if _, err := insert(w, campaigns, c, 0); err != nil {
			return err
		}
	}
	for i, sb := range seed.Bugs {
		b := sb.Bug
		b.CampaignID, b.TesterID = formatID(campaigns.kind, uint64(sb.CampaignIndex+1)), formatID(testers.kind, uint64(sb.TesterIndex+1))
		b.CreatedAt, b.UpdatedAt, b.Seq, b.ID = ago(sb.Age), ago(sb.UpdatedAge), uint64(i+1), formatID(bugs.kind, uint64(i+1))
		s, err := insert(w, bugs, b, 0)
		if err != nil {
			return err
		}
		if err := w.countBug(nil, s); err != nil {
			return err
		}
	}
	return nil
}

// dump lists every object of every table, in index order.
func dump(t *testing.T, db *memdb.MemDB) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	txn := db.Txn(false)
	for name := range schema().Tables {
		it, err := txn.Get(name, indexID)
		if err != nil {
			t.Fatal(err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			out[name] = append(out[name], raw)
		}
	}
	return out
}

// Bulk seeding must leave exactly the blocks, postings chunks and counts
// that inserting the records one by one leaves, with lists long enough to
// fill several chunks and a tester who names a platform twice.
func TestBulkSeedStoresWhatInsertsWould(t *testing.T) {
	seed := seed0(t)
	seed.Testers[0].Platforms = append(seed.Testers[0].Platforms, seed.Testers[0].Platforms[0])
	base := seed.Bugs
	for len(seed.Bugs) < 5*chunkSize+3 {
		seed.Bugs = append(seed.Bugs, base...)
	}
	build := func(fill func(*writeTxn, sandbox.Seed) error) map[string][]any {
		db, err := memdb.NewMemDB(schema())
		if err != nil {
			t.Fatal(err)
		}
		if err := (&DB{db: db, limits: DefaultLimits}).write(context.Background(), func(w *writeTxn) error { return fill(w, seed) }); err != nil {
			t.Fatal(err)
		}
		return dump(t, db)
	}
	want, got := build(seedOneByOne), build(seedTemplate)
	if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
		t.Errorf("bulk seed differs from one-by-one inserts (-want +got):\n%s", diff)
	}
}
