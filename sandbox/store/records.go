package store

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// CreateCampaign stores a new draft campaign and emits campaign.created.
func (d *DB) CreateCampaign(in sandbox.CampaignInput) (sandbox.Campaign, error) {
	var c sandbox.Campaign
	err := d.write(func(txn *memdb.Txn) error {
		seq, id, err := newID(txn, campaigns, d.limits.Records)
		if err != nil {
			return err
		}
		c = sandbox.Campaign{
			ID: id, Name: in.Name, Platform: in.Platform, TestersRequired: in.TestersRequired, RewardPerBug: in.RewardPerBug,
			Status: sandbox.CampaignDraft, CreatedAt: d.now(), Seq: seq,
		}
		if err := txn.Insert(campaigns.name, stored(d, campaigns, c)); err != nil {
			return fmt.Errorf("insert campaign: %w", err)
		}
		return d.emit(txn, sandbox.EventCampaignCreated, c)
	})
	return c, err
}

// Campaign returns one campaign of the account.
func (d *DB) Campaign(id string) (sandbox.Campaign, error) {
	c, err := get(d, d.db.Txn(false), campaigns, "campaign", id)
	if err != nil {
		return sandbox.Campaign{}, err
	}
	return resolved(d, campaigns, c), nil
}

// Campaigns lists the account's campaigns, newest first.
func (d *DB) Campaigns(f sandbox.CampaignFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Campaign], error) {
	return list(d, campaigns, f, page)
}

// FileBug stores a bug reported by a tester and emits bug.created.
func (d *DB) FileBug(in sandbox.BugInput) (sandbox.Bug, error) {
	var b sandbox.Bug
	err := d.write(func(txn *memdb.Txn) error {
		campaign, err := get(d, txn, campaigns, "campaign", in.CampaignID)
		if err != nil {
			return fieldError(err, "campaignId", "campaignId names no campaign of this account")
		}
		testerID := in.TesterID
		if testerID == "" {
			if testerID, err = pickTester(txn, campaign.Platform); err != nil {
				return err
			}
		} else if _, err := get(d, txn, testers, "tester", testerID); err != nil {
			return fieldError(err, "testerId", "testerId names no tester of this account")
		}
		seq, id, err := newID(txn, bugs, d.limits.Records)
		if err != nil {
			return err
		}
		now := d.now()
		b = sandbox.Bug{
			ID: id, CampaignID: in.CampaignID, TesterID: testerID, Title: in.Title, Description: in.Description,
			Severity: in.Severity, Status: sandbox.BugNew, CreatedAt: now, UpdatedAt: now, Seq: seq,
		}
		if err := txn.Insert(bugs.name, stored(d, bugs, b)); err != nil {
			return fmt.Errorf("insert bug: %w", err)
		}
		return d.emit(txn, sandbox.EventBugCreated, b)
	})
	return b, err
}

// fieldError turns the NOT_FOUND of a referenced record into the
// VALIDATION_ERROR of the field that named it.
func fieldError(err error, field, message string) error {
	apiErr := sandbox.AsError(err)
	if apiErr.Code != sandbox.ErrNotFound {
		return err
	}
	return &sandbox.Error{Code: sandbox.ErrValidation, Message: message,
		Details: []sandbox.FieldError{{Field: field, Message: apiErr.Message}}}
}

// pickTester chooses the oldest tester who tests the platform, or failing
// that the oldest tester, so that the same requests pick the same tester.
func pickTester(txn *memdb.Txn, platform string) (string, error) {
	it, err := txn.LowerBound(testers.name, indexID, uint64(0))
	if err != nil {
		return "", fmt.Errorf("scan testers: %w", err)
	}
	first := ""
	for raw := it.Next(); raw != nil; raw = it.Next() {
		t := raw.(*sandbox.Tester)
		if first == "" {
			first = t.ID
		}
		if slices.Contains(t.Platforms, platform) {
			return t.ID, nil
		}
	}
	if first == "" {
		return "", &sandbox.Error{Code: sandbox.ErrValidation, Message: "the account has no testers to file the bug",
			Details: []sandbox.FieldError{{Field: "testerId", Message: "is required: the account has no testers"}}}
	}
	return first, nil
}

// Bugs lists the account's bugs, newest first.
func (d *DB) Bugs(f sandbox.BugFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Bug], error) {
	return list(d, bugs, f, page)
}

// UpdateBug applies a patch to one bug and emits bug.updated if it changed.
func (d *DB) UpdateBug(id string, p sandbox.BugPatch) (sandbox.Bug, error) {
	var updated sandbox.Bug
	err := d.write(func(txn *memdb.Txn) error {
		current, err := get(d, txn, bugs, "bug", id)
		if err != nil {
			return err
		}
		next, changed, err := resolved(d, bugs, current).Apply(p, d.now())
		updated = next
		if err != nil || !changed {
			return err
		}
		if err := txn.Insert(bugs.name, stored(d, bugs, next)); err != nil {
			return fmt.Errorf("update bug: %w", err)
		}
		return d.emit(txn, sandbox.EventBugUpdated, next)
	})
	return updated, err
}

// CreateWebhook registers a webhook with a new signing secret.
func (d *DB) CreateWebhook(in sandbox.WebhookInput) (sandbox.Webhook, error) {
	var w sandbox.Webhook
	err := d.write(func(txn *memdb.Txn) error {
		seq, id, err := newID(txn, webhooks, d.limits.Webhooks)
		if err != nil {
			return err
		}
		w = sandbox.Webhook{
			ID: id, URL: in.URL, Events: in.Events, Status: sandbox.WebhookActive,
			Secret: webhookSecret(d.accountID, id), CreatedAt: d.now(), Seq: seq,
		}
		if err := txn.Insert(webhooks.name, stored(d, webhooks, w)); err != nil {
			return fmt.Errorf("insert webhook: %w", err)
		}
		return nil
	})
	return w, err
}

// Webhooks returns all the account's webhooks, oldest first.
func (d *DB) Webhooks() ([]sandbox.Webhook, error) {
	it, err := d.db.Txn(false).Get(webhooks.name, indexID+"_prefix")
	if err != nil {
		return nil, fmt.Errorf("scan webhooks: %w", err)
	}
	var hooks []sandbox.Webhook
	for raw := it.Next(); raw != nil; raw = it.Next() {
		hooks = append(hooks, resolved(d, webhooks, raw.(*sandbox.Webhook)))
	}
	return hooks, nil
}

// Testers lists the account's testers, newest first.
func (d *DB) Testers(f sandbox.TesterFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Tester], error) {
	return list(d, testers, f, page)
}

// Events lists the account's most recent events, newest first.
func (d *DB) Events(page sandbox.PageRequest) (sandbox.Page[sandbox.Event], error) {
	last, err := d.db.Txn(false).Last(events.name, indexID)
	if err != nil || last == nil {
		return sandbox.NewPage[sandbox.Event](nil, false, 0), err
	}
	newest := last.(*sandbox.Event).Seq
	return list(d, events, eventsAfter(newest-min(newest, uint64(d.limits.Events))), page)
}

// Analytics counts the bugs of the account, or of one of its campaigns, from
// one snapshot so the counts agree with each other.
func (d *DB) Analytics(campaignID string) (sandbox.Analytics, error) {
	txn := d.db.Txn(false)
	result := sandbox.Analytics{Bugs: sandbox.NewBugStats()}
	var (
		bugIt memdb.ResultIterator
		err   error
	)
	if campaignID != "" {
		if _, err := get(d, txn, campaigns, "campaign", campaignID); err != nil {
			return result, err
		}
		result.CampaignID, result.Campaigns = &campaignID, 1
		bugIt, err = txn.Get(bugs.name, "campaign_prefix", campaignID)
	} else {
		if last, err := txn.Last(campaigns.name, indexID); err != nil {
			return result, fmt.Errorf("read last campaign: %w", err)
		} else if last != nil {
			// Campaigns are never deleted, so the last seq is the count.
			result.Campaigns = int(last.(*sandbox.Campaign).Seq)
		}
		bugIt, err = txn.Get(bugs.name, indexID+"_prefix")
	}
	if err != nil {
		return result, fmt.Errorf("scan bugs: %w", err)
	}
	for raw := bugIt.Next(); raw != nil; raw = bugIt.Next() {
		result.Bugs.Count(raw.(*sandbox.Bug))
	}
	return result, nil
}
