package sandbox

import "context"

// Store keeps one account's records. Each method is one atomic change or one
// consistent read; a method that fails changes nothing. A method whose ctx
// is done returns its error: a write that has not begun does not begin, and
// a read stops where it is.
type Store interface {
	// CreateCampaign stores a new draft campaign; LIMIT_REACHED when the
	// account holds as many campaigns as it may, or the sandbox as much as
	// its memory budget allows.
	CreateCampaign(ctx context.Context, in CampaignInput) (Campaign, error)
	// Campaign returns one campaign, or NOT_FOUND.
	Campaign(ctx context.Context, id string) (Campaign, error)
	Campaigns(ctx context.Context, f CampaignFilter, page PageRequest) (Page[Campaign], error)

	// FileBug records a bug as a tester reports it; the campaign and tester
	// must exist (VALIDATION_ERROR otherwise).
	FileBug(ctx context.Context, in BugInput) (Bug, error)
	Bugs(ctx context.Context, f BugFilter, page PageRequest) (Page[Bug], error)
	// UpdateBug applies the patch with Bug.Apply; NOT_FOUND for an unknown
	// id.
	UpdateBug(ctx context.Context, id string, p BugPatch) (Bug, error)

	// CreateWebhook registers a webhook; LIMIT_REACHED past the account's
	// webhook cap.
	CreateWebhook(ctx context.Context, in WebhookInput) (Webhook, error)
	// Webhooks returns the account's webhooks, oldest first.
	Webhooks(ctx context.Context) ([]Webhook, error)

	Testers(ctx context.Context, f TesterFilter, page PageRequest) (Page[Tester], error)
	// Analytics counts over the account, or over one campaign when
	// campaignID is not empty (NOT_FOUND if it does not exist).
	Analytics(ctx context.Context, campaignID string) (Analytics, error)
	// Events lists the account's most recent events, newest first.
	Events(ctx context.Context, page PageRequest) (Page[Event], error)
}
