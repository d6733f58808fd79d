package store

import (
	"slices"

	"github.com/testcampaign/kit/sandbox"
)

// seedTemplate writes the seed with times relative to an origin of zero,
// through the same inserts as the API's writes, so seeded records are
// indexed and counted as written ones are.
func seedTemplate(w *writeTxn, seed sandbox.Seed) error {
	ago := func(age interface{ Milliseconds() int64 }) sandbox.Time { return -sandbox.Time(age.Milliseconds()) }
	testerIDs := make([]string, len(seed.Testers))
	for i, st := range seed.Testers {
		t := st.Tester
		t.Platforms = slices.Clone(t.Platforms)
		t.CreatedAt = ago(st.Age)
		t.Seq = uint64(i + 1)
		t.ID = formatID(testers.kind, t.Seq)
		if _, err := insert(w, testers, t, 0); err != nil {
			return err
		}
		testerIDs[i] = t.ID
	}
	campaignIDs := make([]string, len(seed.Campaigns))
	for i, sc := range seed.Campaigns {
		c := sc.Campaign
		c.CreatedAt = ago(sc.Age)
		c.Seq = uint64(i + 1)
		c.ID = formatID(campaigns.kind, c.Seq)
		if _, err := insert(w, campaigns, c, 0); err != nil {
			return err
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
		s, err := insert(w, bugs, b, 0)
		if err != nil {
			return err
		}
		if err := w.countBug(s, 1); err != nil {
			return err
		}
	}
	return nil
}
