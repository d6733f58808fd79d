package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// CreateCampaign stores a new draft campaign and emits campaign.created.
func (d *DB) CreateCampaign(ctx context.Context, in sandbox.CampaignInput) (sandbox.Campaign, error) {
	var c sandbox.Campaign
	err := d.write(ctx, func(w *writeTxn) error {
		seq, id, err := newID(w.Txn, campaigns, d.limits.Records)
		if err != nil {
			return err
		}
		c = sandbox.Campaign{
			ID: id, Name: in.Name, Platform: intern(in.Platform, sandbox.Platforms), TestersRequired: in.TestersRequired,
			RewardPerBug: in.RewardPerBug, Status: sandbox.CampaignDraft, CreatedAt: w.now, Seq: seq,
		}
		s, err := insert(w, campaigns, c, len(c.Name)+len(c.RewardPerBug))
		if err != nil {
			return err
		}
		return w.emit(sandbox.EventCampaignCreated, s)
	})
	return c, err
}

// intern returns the one copy of value that allowed holds, so that a
// million records share it instead of each holding the bytes it was decoded
// from.
func intern(value string, allowed []string) string {
	if i := slices.Index(allowed, value); i >= 0 {
		return allowed[i]
	}
	return value
}

// Campaign returns one campaign of the account.
func (d *DB) Campaign(ctx context.Context, id string) (sandbox.Campaign, error) {
	c, err := get(d.db.Txn(false), campaigns, "campaign", id)
	if err != nil {
		return sandbox.Campaign{}, err
	}
	return resolved(d, campaigns, c), nil
}

// Campaigns lists the account's campaigns, newest first.
func (d *DB) Campaigns(ctx context.Context, f sandbox.CampaignFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Campaign], error) {
	return list(ctx, d, campaigns, f, 0, page)
}

// FileBug stores a bug reported by a tester and emits bug.created.
func (d *DB) FileBug(ctx context.Context, in sandbox.BugInput) (sandbox.Bug, error) {
	var b sandbox.Bug
	err := d.write(ctx, func(w *writeTxn) error {
		campaign, err := get(w.Txn, campaigns, "campaign", in.CampaignID)
		if err != nil {
			return fieldError(err, "campaignId", "campaignId names no campaign of this account")
		}
		testerID := in.TesterID
		if testerID == "" {
			if testerID, err = pickTester(w, campaign.Platform); err != nil {
				return err
			}
		} else if t, err := get(w.Txn, testers, "tester", testerID); err != nil {
			return fieldError(err, "testerId", "testerId names no tester of this account")
		} else {
			testerID = t.ID
		}
		seq, id, err := newID(w.Txn, bugs, d.limits.Records)
		if err != nil {
			return err
		}
		b = sandbox.Bug{
			ID: id, CampaignID: campaign.ID, TesterID: testerID, Title: in.Title, Description: in.Description,
			Severity: intern(in.Severity, sandbox.Severities), Status: sandbox.BugNew, CreatedAt: w.now, UpdatedAt: w.now, Seq: seq,
		}
		s, err := insert(w, bugs, b, len(b.Title)+len(b.Description))
		if err != nil {
			return err
		}
		if err := w.countBug(nil, s); err != nil {
			return err
		}
		return w.emit(sandbox.EventBugCreated, s)
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
func pickTester(w *writeTxn, platform string) (string, error) {
	for seq := uint64(1); ; seq++ {
		t, found, err := lookup(w.Txn, testers, seq)
		if err != nil {
			return "", err
		}
		if !found {
			break
		}
		if slices.Contains(t.Platforms, platform) {
			return t.ID, nil
		}
	}
	first, found, err := lookup(w.Txn, testers, 1)
	if err != nil {
		return "", err
	}
	if !found {
		return "", &sandbox.Error{Code: sandbox.ErrValidation, Message: "the account has no testers to file the bug",
			Details: []sandbox.FieldError{{Field: "testerId", Message: "is required: the account has no testers"}}}
	}
	return first.ID, nil
}

// Bugs lists the account's bugs, newest first.
func (d *DB) Bugs(ctx context.Context, f sandbox.BugFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Bug], error) {
	return list(ctx, d, bugs, f, 0, page)
}

// UpdateBug applies a patch to one bug and emits bug.updated if it changed.
func (d *DB) UpdateBug(ctx context.Context, id string, p sandbox.BugPatch) (sandbox.Bug, error) {
	var updated sandbox.Bug
	err := d.write(ctx, func(w *writeTxn) error {
		current, err := get(w.Txn, bugs, "bug", id)
		if err != nil {
			return err
		}
		next, changed, err := resolved(d, bugs, current).Apply(p, w.now)
		updated = next
		if err != nil || !changed {
			return err
		}
		next.Status = intern(next.Status, sandbox.BugStatuses)
		s, err := replace(w, bugs, &current, next)
		if err != nil {
			return err
		}
		if current.Status != s.Status {
			if err := w.countBug(&current, s); err != nil {
				return err
			}
		}
		return w.emit(sandbox.EventBugUpdated, s)
	})
	return updated, err
}

// CreateWebhook registers a webhook with a new signing secret.
func (d *DB) CreateWebhook(ctx context.Context, in sandbox.WebhookInput) (sandbox.Webhook, error) {
	var h sandbox.Webhook
	err := d.write(ctx, func(w *writeTxn) error {
		seq, id, err := newID(w.Txn, webhooks, d.limits.Webhooks)
		if err != nil {
			return err
		}
		d.webhooked.Store(true)
		h = sandbox.Webhook{
			ID: id, URL: in.URL, Events: in.Events, Status: sandbox.WebhookActive,
			Secret: webhookSecret(d.accountID, id), CreatedAt: w.now, Seq: seq,
		}
		_, err = insert(w, webhooks, h, len(h.URL))
		return err
	})
	return h, err
}

// Webhooks returns all the account's webhooks, oldest first.
func (d *DB) Webhooks(ctx context.Context) ([]sandbox.Webhook, error) {
	return d.webhooks(d.db.Txn(false))
}

func (d *DB) webhooks(txn *memdb.Txn) ([]sandbox.Webhook, error) {
	last, err := lastBlock(txn, webhooks)
	if err != nil || last == nil {
		return nil, err
	}
	var hooks []sandbox.Webhook
	for no := range last.no {
		b, err := fullBlockAt(txn, webhooks, no)
		if err != nil {
			return nil, fmt.Errorf("read webhooks: %w", err)
		}
		if b == nil {
			return nil, fmt.Errorf("read webhooks: block %d of %d is missing", no, last.no)
		}
		for i := range b.size() {
			hooks = append(hooks, resolved(d, webhooks, record(webhooks, b, i)))
		}
	}
	for i := range last.size() {
		hooks = append(hooks, resolved(d, webhooks, record(webhooks, last, i)))
	}
	return hooks, nil
}

// Testers lists the account's testers, newest first.
func (d *DB) Testers(ctx context.Context, f sandbox.TesterFilter, page sandbox.PageRequest) (sandbox.Page[sandbox.Tester], error) {
	return list(ctx, d, testers, f, 0, page)
}

// webhookSecret derives a webhook's signing secret from its account and ID, so
// that a frozen-clock run reproduces it while two keys never share one.
func webhookSecret(accountID, webhookID string) string {
	sum := sha256.Sum256([]byte("whsec:" + accountID + ":" + webhookID))
	return "whsec_" + hex.EncodeToString(sum[:24])
}
