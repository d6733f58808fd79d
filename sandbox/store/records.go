package store

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// CreateCampaign stores a new draft campaign and emits campaign.created.
func (s *Store) CreateCampaign(accountID string, in sandbox.CampaignInput) (sandbox.Campaign, error) {
	c := sandbox.Campaign{
		Name: in.Name, Platform: in.Platform, TestersRequired: in.TestersRequired, RewardPerBug: in.RewardPerBug,
		Status: sandbox.CampaignDraft, AccountID: accountID,
	}
	err := s.write(func(txn *memdb.Txn) error {
		var err error
		if c.Seq, c.ID, err = newID(txn, accountID, kindCampaign); err != nil {
			return err
		}
		c.CreatedAt = s.now()
		if err := txn.Insert(tableCampaigns, &c); err != nil {
			return fmt.Errorf("insert campaign: %w", err)
		}
		return s.emit(txn, accountID, sandbox.EventCampaignCreated, c)
	})
	return c, err
}

// Campaign returns one campaign of the account.
func (s *Store) Campaign(accountID, id string) (sandbox.Campaign, error) {
	return get[sandbox.Campaign](s, tableCampaigns, "campaign", accountID, id)
}

// Campaigns lists the account's campaigns, newest first.
func (s *Store) Campaigns(accountID string, f sandbox.CampaignFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Campaign], error) {
	index, prefix := indexSeq, []any{accountID}
	switch {
	case f.Status != "":
		index, prefix = indexStatus, []any{accountID, f.Status}
	case f.Platform != "":
		index, prefix = indexPlatform, []any{accountID, f.Platform}
	}
	return list(s, tableCampaigns, index, prefix, page, campaignSeq, func(c *sandbox.Campaign) bool {
		return matches(f.Status, c.Status) && matches(f.Platform, c.Platform)
	})
}

func campaignSeq(c *sandbox.Campaign) uint64 { return c.Seq }

// matches reports whether a record value passes a filter value; an empty filter
// passes everything.
func matches(filter, value string) bool {
	return filter == "" || filter == value
}

// FileBug stores a bug reported by a tester and emits bug.created.
func (s *Store) FileBug(accountID string, in sandbox.BugInput) (sandbox.Bug, error) {
	b := sandbox.Bug{
		CampaignID: in.CampaignID, TesterID: in.TesterID, Title: in.Title, Description: in.Description,
		Severity: in.Severity, Status: sandbox.BugNew, AccountID: accountID,
	}
	err := s.write(func(txn *memdb.Txn) error {
		campaign, err := txn.First(tableCampaigns, indexID, accountID, in.CampaignID)
		if err != nil {
			return fmt.Errorf("look up campaign: %w", err)
		}
		if campaign == nil {
			return &sandbox.Error{Code: sandbox.ErrValidation, Message: "campaignId names no campaign of this account",
				Details: []sandbox.FieldError{{Field: "campaignId", Message: fmt.Sprintf("no campaign with id %q", in.CampaignID)}}}
		}
		if b.TesterID == "" {
			if b.TesterID, err = pickTester(txn, accountID, campaign.(*sandbox.Campaign).Platform); err != nil {
				return err
			}
		} else if tester, err := txn.First(tableTesters, indexID, accountID, b.TesterID); err != nil || tester == nil {
			return &sandbox.Error{Code: sandbox.ErrValidation, Message: "testerId names no tester of this account",
				Details: []sandbox.FieldError{{Field: "testerId", Message: fmt.Sprintf("no tester with id %q", b.TesterID)}}}
		}
		if b.Seq, b.ID, err = newID(txn, accountID, kindBug); err != nil {
			return err
		}
		b.CreatedAt = s.now()
		b.UpdatedAt = b.CreatedAt
		if err := txn.Insert(tableBugs, &b); err != nil {
			return fmt.Errorf("insert bug: %w", err)
		}
		return s.emit(txn, accountID, sandbox.EventBugCreated, b)
	})
	return b, err
}

// pickTester chooses the oldest tester who tests the platform, or failing
// that the oldest tester, so that the same requests pick the same tester.
func pickTester(txn *memdb.Txn, accountID, platform string) (string, error) {
	it, err := txn.LowerBound(tableTesters, indexSeq, accountID, uint64(0))
	if err != nil {
		return "", fmt.Errorf("scan testers: %w", err)
	}
	first := ""
	for raw := it.Next(); raw != nil; raw = it.Next() {
		t := raw.(*sandbox.Tester)
		if t.AccountID != accountID {
			break
		}
		if first == "" {
			first = t.ID
		}
		for _, p := range t.Platforms {
			if p == platform {
				return t.ID, nil
			}
		}
	}
	if first == "" {
		return "", &sandbox.Error{Code: sandbox.ErrValidation, Message: "the account has no testers to file the bug",
			Details: []sandbox.FieldError{{Field: "testerId", Message: "is required: the account has no testers"}}}
	}
	return first, nil
}

// Bugs lists the account's bugs, newest first, through the index of the most
// selective filter given.
func (s *Store) Bugs(accountID string, f sandbox.BugFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Bug], error) {
	index, prefix := indexSeq, []any{accountID}
	switch {
	case f.CampaignID != "":
		index, prefix = indexCampaign, []any{accountID, f.CampaignID}
	case f.TesterID != "":
		index, prefix = indexTester, []any{accountID, f.TesterID}
	case f.Status != "":
		index, prefix = indexStatus, []any{accountID, f.Status}
	case f.Severity != "":
		index, prefix = indexSeverity, []any{accountID, f.Severity}
	}
	return list(s, tableBugs, index, prefix, page, bugSeq, func(b *sandbox.Bug) bool {
		return matches(f.CampaignID, b.CampaignID) && matches(f.TesterID, b.TesterID) &&
			matches(f.Status, b.Status) && matches(f.Severity, b.Severity)
	})
}

func bugSeq(b *sandbox.Bug) uint64 { return b.Seq }

// UpdateBug applies a patch to one bug and emits bug.updated if it changed.
func (s *Store) UpdateBug(accountID, id string, p sandbox.BugPatch) (sandbox.Bug, error) {
	var updated sandbox.Bug
	err := s.write(func(txn *memdb.Txn) error {
		raw, err := txn.First(tableBugs, indexID, accountID, id)
		if err != nil {
			return fmt.Errorf("look up bug: %w", err)
		}
		if raw == nil {
			return sandbox.Errorf(sandbox.ErrNotFound, "no bug with id %q", id)
		}
		next, changed, err := raw.(*sandbox.Bug).Apply(p, s.now())
		updated = next
		if err != nil || !changed {
			return err
		}
		if err := txn.Insert(tableBugs, &next); err != nil {
			return fmt.Errorf("update bug: %w", err)
		}
		return s.emit(txn, accountID, sandbox.EventBugUpdated, next)
	})
	return updated, err
}

// CreateWebhook registers a webhook with a new signing secret.
func (s *Store) CreateWebhook(accountID string, in sandbox.WebhookInput) (sandbox.Webhook, error) {
	w := sandbox.Webhook{URL: in.URL, Events: in.Events, Status: sandbox.WebhookActive, AccountID: accountID}
	err := s.write(func(txn *memdb.Txn) error {
		var err error
		if w.Seq, w.ID, err = newID(txn, accountID, kindWebhook); err != nil {
			return err
		}
		w.Secret = webhookSecret(accountID, w.ID)
		w.CreatedAt = s.now()
		if err := txn.Insert(tableWebhooks, &w); err != nil {
			return fmt.Errorf("insert webhook: %w", err)
		}
		return nil
	})
	return w, err
}

// Testers lists the account's testers, newest first.
func (s *Store) Testers(accountID string, f sandbox.TesterFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Tester], error) {
	return list(s, tableTesters, indexSeq, []any{accountID}, page, testerSeq, func(t *sandbox.Tester) bool {
		if f.Platform == "" {
			return true
		}
		for _, p := range t.Platforms {
			if p == f.Platform {
				return true
			}
		}
		return false
	})
}

func testerSeq(t *sandbox.Tester) uint64 { return t.Seq }

// Events lists the events the account's writes emitted, newest first.
func (s *Store) Events(accountID string, page sandbox.PageRequest) (sandbox.Page[sandbox.Event], error) {
	return list(s, tableEvents, indexSeq, []any{accountID}, page, eventSeq, nil)
}

func eventSeq(e *sandbox.Event) uint64 { return e.Seq }

// Analytics counts the bugs of the account, or of one of its campaigns, from
// one snapshot so the counts agree with each other.
func (s *Store) Analytics(accountID, campaignID string) (sandbox.Analytics, error) {
	txn := s.db.Txn(false)
	result := sandbox.Analytics{Bugs: sandbox.NewBugStats()}
	bugIndex, bugArgs := indexID+"_prefix", []any{accountID}
	if campaignID != "" {
		raw, err := txn.First(tableCampaigns, indexID, accountID, campaignID)
		if err != nil {
			return result, fmt.Errorf("look up campaign: %w", err)
		}
		if raw == nil {
			return result, sandbox.Errorf(sandbox.ErrNotFound, "no campaign with id %q", campaignID)
		}
		result.CampaignID, result.Campaigns = &campaignID, 1
		bugIndex, bugArgs = indexCampaign+"_prefix", []any{accountID, campaignID}
	} else {
		campaigns, err := txn.Get(tableCampaigns, indexID+"_prefix", accountID)
		if err != nil {
			return result, fmt.Errorf("scan campaigns: %w", err)
		}
		for raw := campaigns.Next(); raw != nil; raw = campaigns.Next() {
			result.Campaigns++
		}
	}
	bugs, err := txn.Get(tableBugs, bugIndex, bugArgs...)
	if err != nil {
		return result, fmt.Errorf("scan bugs: %w", err)
	}
	for raw := bugs.Next(); raw != nil; raw = bugs.Next() {
		result.Bugs.Count(*raw.(*sandbox.Bug))
	}
	return result, nil
}

// Webhooks returns all the account's webhooks, oldest first.
func (s *Store) Webhooks(accountID string) ([]sandbox.Webhook, error) {
	it, err := s.db.Txn(false).Get(tableWebhooks, indexSeq+"_prefix", accountID)
	if err != nil {
		return nil, fmt.Errorf("scan webhooks: %w", err)
	}
	var hooks []sandbox.Webhook
	for raw := it.Next(); raw != nil; raw = it.Next() {
		hooks = append(hooks, *raw.(*sandbox.Webhook))
	}
	return hooks, nil
}

// RecordDelivery stores one delivery attempt.
func (s *Store) RecordDelivery(accountID string, d sandbox.Delivery) error {
	return s.write(func(txn *memdb.Txn) error {
		var err error
		if d.Seq, d.ID, err = newID(txn, accountID, kindDelivery); err != nil {
			return err
		}
		d.AccountID = accountID
		if err := txn.Insert(tableDeliveries, &d); err != nil {
			return fmt.Errorf("insert delivery: %w", err)
		}
		return nil
	})
}

// Deliveries lists the account's delivery attempts, newest first.
func (s *Store) Deliveries(accountID string, page sandbox.PageRequest) (sandbox.Page[sandbox.Delivery], error) {
	return list(s, tableDeliveries, indexSeq, []any{accountID}, page, deliverySeq, nil)
}

func deliverySeq(d *sandbox.Delivery) uint64 { return d.Seq }
