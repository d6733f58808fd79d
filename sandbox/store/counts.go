package store

import (
	"context"
	"fmt"

	"github.com/testcampaign/kit/sandbox"
)

// bugCounts counts the bugs of one campaign, or of the whole account when
// campaign is 0. Every write that files or moves a bug updates them in its
// own transaction, so analytics read two rows instead of walking the bugs,
// and always agree with the bugs a list shows.
type bugCounts struct {
	campaign   uint64
	total      int
	byStatus   [5]int
	bySeverity [4]int
}

// countBug counts a bug that moved from was to is: a new bug when was is
// nil, a change of status otherwise. It updates its campaign's counts and the
// account's, reading both rows before writing either (see refile for why).
func (w *writeTxn) countBug(was, is *sandbox.Bug) error {
	campaign, status, severity, err := countedAs(is)
	if err != nil {
		return err
	}
	var rows [2]bugCounts
	for i, scope := range [2]uint64{0, campaign} {
		raw, err := w.First(countsTable, indexID, scope)
		if err != nil {
			return fmt.Errorf("read bug counts: %w", err)
		}
		rows[i] = bugCounts{campaign: scope}
		if raw != nil {
			rows[i] = *raw.(*bugCounts)
		} else {
			w.cost += countsBytes
		}
		rows[i].add(status, severity, 1)
	}
	if was != nil {
		wasCampaign, wasStatus, wasSeverity, err := countedAs(was)
		if err != nil {
			return err
		}
		if wasCampaign != campaign {
			return fmt.Errorf("bug %s moved from campaign %s to %s", is.ID, was.CampaignID, is.CampaignID)
		}
		for i := range rows {
			rows[i].add(wasStatus, wasSeverity, -1)
		}
	}
	for i := range rows {
		if err := w.Insert(countsTable, &rows[i]); err != nil {
			return fmt.Errorf("write bug counts: %w", err)
		}
	}
	return nil
}

// countBugs counts bugs into a table that holds no counts yet, writing each
// row once.
func (w *writeTxn) countBugs(bugs []sandbox.Bug) error {
	if len(bugs) == 0 {
		return nil
	}
	rows := map[uint64]*bugCounts{0: {campaign: 0}}
	for i := range bugs {
		campaign, status, severity, err := countedAs(&bugs[i])
		if err != nil {
			return err
		}
		if rows[campaign] == nil {
			rows[campaign] = &bugCounts{campaign: campaign}
		}
		rows[0].add(status, severity, 1)
		rows[campaign].add(status, severity, 1)
	}
	for _, c := range rows {
		if err := w.Insert(countsTable, c); err != nil {
			return fmt.Errorf("write bug counts: %w", err)
		}
	}
	return nil
}

// countedAs returns where a bug is counted: its campaign's sequence number
// and its status's and severity's places in bugCounts' arrays.
func countedAs(b *sandbox.Bug) (campaign uint64, status, severity int, err error) {
	campaign, ok := parseID(campaigns, b.CampaignID)
	if !ok {
		return 0, 0, 0, fmt.Errorf("bug %s names campaign %q", b.ID, b.CampaignID)
	}
	status, severity = statusIndex(b.Status), severityIndex(b.Severity)
	if status < 0 || severity < 0 {
		return 0, 0, 0, fmt.Errorf("bug %s is %s and %s", b.ID, b.Status, b.Severity)
	}
	return campaign, status, severity, nil
}

func (c *bugCounts) add(status, severity, delta int) {
	c.total += delta
	c.byStatus[status] += delta
	c.bySeverity[severity] += delta
}

// Analytics counts the bugs of the account, or of one of its campaigns, from
// one snapshot so the counts agree with each other.
func (d *DB) Analytics(ctx context.Context, campaignID string) (sandbox.Analytics, error) {
	txn := d.db.Txn(false)
	result := sandbox.Analytics{Bugs: sandbox.NewBugStats()}
	scope := uint64(0)
	if campaignID != "" {
		c, err := get(txn, campaigns, "campaign", campaignID)
		if err != nil {
			return result, err
		}
		scope = c.Seq
		result.CampaignID, result.Campaigns = &campaignID, 1
	} else {
		// Campaigns are never deleted, so the last seq is the count.
		last, err := lastSeq(txn, campaigns)
		if err != nil {
			return result, err
		}
		result.Campaigns = int(last)
	}
	raw, err := txn.First(countsTable, indexID, scope)
	if err != nil || raw == nil {
		return result, err
	}
	c := raw.(*bugCounts)
	result.Bugs.Total = c.total
	for i, s := range sandbox.BugStatuses {
		result.Bugs.ByStatus[s] = c.byStatus[i]
	}
	for i, s := range sandbox.Severities {
		result.Bugs.BySeverity[s] = c.bySeverity[i]
	}
	return result, nil
}
