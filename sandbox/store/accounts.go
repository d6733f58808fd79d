package store

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// recordTables are the tables that hold an account's data, in the order a
// reset empties them.
var recordTables = []string{tableDeliveries, tableEvents, tableWebhooks, tableBugs, tableCampaigns, tableTesters, tableSequences}

// EnsureAccount creates and seeds the account the first time it is seen.
func (s *Store) EnsureAccount(account sandbox.Account) error {
	if raw, err := s.db.Txn(false).First(tableAccounts, indexID, account.ID); err == nil && raw != nil {
		return nil
	}
	return s.write(func(txn *memdb.Txn) error {
		// Another request with the same new key may have won the race
		// between the read above and this write.
		raw, err := txn.First(tableAccounts, indexID, account.ID)
		if err != nil {
			return fmt.Errorf("look up account: %w", err)
		}
		if raw != nil {
			return nil
		}
		if err := txn.Insert(tableAccounts, &account); err != nil {
			return fmt.Errorf("insert account: %w", err)
		}
		return s.seedAccount(txn, account.ID)
	})
}

// ResetAccount removes all the account's records and seeds it again, so its
// IDs start over as for a new key.
func (s *Store) ResetAccount(accountID string) error {
	return s.write(func(txn *memdb.Txn) error {
		for _, table := range recordTables {
			if _, err := txn.DeleteAll(table, indexID+"_prefix", accountID); err != nil {
				return fmt.Errorf("empty %s: %w", table, err)
			}
		}
		return s.seedAccount(txn, accountID)
	})
}

func (s *Store) seedAccount(txn *memdb.Txn, accountID string) error {
	now := s.now()
	testerIDs := make([]string, len(s.seed.Testers))
	for i, st := range s.seed.Testers {
		t := st.Tester
		t.Platforms = slices.Clone(t.Platforms)
		t.AccountID, t.CreatedAt = accountID, now.Add(-st.Age)
		var err error
		if t.Seq, t.ID, err = newID(txn, accountID, kindTester); err != nil {
			return err
		}
		if err := txn.Insert(tableTesters, &t); err != nil {
			return fmt.Errorf("seed tester %d: %w", i, err)
		}
		testerIDs[i] = t.ID
	}
	campaignIDs := make([]string, len(s.seed.Campaigns))
	for i, sc := range s.seed.Campaigns {
		c := sc.Campaign
		c.AccountID, c.CreatedAt = accountID, now.Add(-sc.Age)
		var err error
		if c.Seq, c.ID, err = newID(txn, accountID, kindCampaign); err != nil {
			return err
		}
		if err := txn.Insert(tableCampaigns, &c); err != nil {
			return fmt.Errorf("seed campaign %d: %w", i, err)
		}
		campaignIDs[i] = c.ID
	}
	for i, sb := range s.seed.Bugs {
		b := sb.Bug
		if b.Resolution != nil {
			resolution := *b.Resolution
			b.Resolution = &resolution
		}
		b.AccountID = accountID
		b.CampaignID, b.TesterID = campaignIDs[sb.CampaignIndex], testerIDs[sb.TesterIndex]
		b.CreatedAt, b.UpdatedAt = now.Add(-sb.Age), now.Add(-sb.UpdatedAge)
		var err error
		if b.Seq, b.ID, err = newID(txn, accountID, kindBug); err != nil {
			return err
		}
		if err := txn.Insert(tableBugs, &b); err != nil {
			return fmt.Errorf("seed bug %d: %w", i, err)
		}
	}
	return nil
}
