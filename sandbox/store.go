package sandbox

// Store keeps one account's records. Each method is one atomic change or one
// consistent read; a method that fails changes nothing.
type Store interface {
	// CreateCampaign stores a new draft campaign; LIMIT_REACHED when the
	// account holds as many campaigns as it may.
	CreateCampaign(in CampaignInput) (Campaign, error)
	// Campaign returns one campaign, or NOT_FOUND.
	Campaign(id string) (Campaign, error)
	Campaigns(f CampaignFilter, page PageRequest) (Page[Campaign], error)

	// FileBug records a bug as a tester reports it; the campaign and tester
	// must exist (VALIDATION_ERROR otherwise).
	FileBug(in BugInput) (Bug, error)
	Bugs(f BugFilter, page PageRequest) (Page[Bug], error)
	// UpdateBug applies the patch with Bug.Apply; NOT_FOUND for an unknown
	// id.
	UpdateBug(id string, p BugPatch) (Bug, error)

	// CreateWebhook registers a webhook; LIMIT_REACHED past the account's
	// webhook cap.
	CreateWebhook(in WebhookInput) (Webhook, error)
	// Webhooks returns the account's webhooks, oldest first.
	Webhooks() ([]Webhook, error)

	Testers(f TesterFilter, page PageRequest) (Page[Tester], error)
	// Analytics counts over the account, or over one campaign when
	// campaignID is not empty (NOT_FOUND if it does not exist).
	Analytics(campaignID string) (Analytics, error)
	// Events lists the account's most recent events, newest first.
	Events(page PageRequest) (Page[Event], error)
}
