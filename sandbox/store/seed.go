package store

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// seedTemplate writes the seed with times relative to an origin of zero.
func seedTemplate(txn *memdb.Txn, seed sandbox.Seed) error {
	ago := func(age interface{ Milliseconds() int64 }) sandbox.Time { return -sandbox.Time(age.Milliseconds()) }
	testerIDs := make([]string, len(seed.Testers))
	for i, st := range seed.Testers {
		t := st.Tester
		t.Platforms = slices.Clone(t.Platforms)
		t.CreatedAt = ago(st.Age)
		t.Seq = uint64(i + 1)
		t.ID = formatID(testers.kind, t.Seq)
		if err := txn.Insert(testers.name, &t); err != nil {
			return fmt.Errorf("seed tester %d: %w", i, err)
		}
		testerIDs[i] = t.ID
	}
	campaignIDs := make([]string, len(seed.Campaigns))
	for i, sc := range seed.Campaigns {
		c := sc.Campaign
		c.CreatedAt = ago(sc.Age)
		c.Seq = uint64(i + 1)
		c.ID = formatID(campaigns.kind, c.Seq)
		if err := txn.Insert(campaigns.name, &c); err != nil {
			return fmt.Errorf("seed campaign %d: %w", i, err)
		}
		campaignIDs[i] = c.ID
	}
	for i, sb := range seed.Bugs {
		b := sb.Bug
		if b.Resolution != nil {
			resolution := *b.Resolution
			b.Resolution = &resolution
		}
		b.CampaignID, b.TesterID = campaignIDs[sb.CampaignIndex], testerIDs[sb.TesterIndex]
		b.CreatedAt, b.UpdatedAt = ago(sb.Age), ago(sb.UpdatedAge)
		b.Seq = uint64(i + 1)
		b.ID = formatID(bugs.kind, b.Seq)
		if err := txn.Insert(bugs.name, &b); err != nil {
			return fmt.Errorf("seed bug %d: %w", i, err)
		}
	}
	return nil
}
