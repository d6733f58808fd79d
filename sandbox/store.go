package sandbox

// Store keeps every account's records. Each method is one atomic change or one
// consistent read; a method that fails changes nothing. Methods that take an
// account ID see only that account's records: an ID of another account's
// record is NOT_FOUND.
type Store interface {
	// EnsureAccount creates the account, seeded, the first time it is seen.
	EnsureAccount(account Account) error
	// ResetAccount removes all the account's records and seeds it again.
	ResetAccount(accountID string) error

	CreateCampaign(accountID string, in CampaignInput) (Campaign, error)
	Campaign(accountID, id string) (Campaign, error)
	Campaigns(accountID string, f CampaignFilter, page PageRequest) (Page[Campaign], error)

	// FileBug records a bug as a tester reports it; the campaign and tester
	// must exist (VALIDATION_ERROR otherwise).
	FileBug(accountID string, in BugInput) (Bug, error)
	Bugs(accountID string, f BugFilter, page PageRequest) (Page[Bug], error)
	// UpdateBug applies the patch with Bug.Apply.
	UpdateBug(accountID, id string, p BugPatch) (Bug, error)

	CreateWebhook(accountID string, in WebhookInput) (Webhook, error)
	Testers(accountID string, f TesterFilter, page PageRequest) (Page[Tester], error)
	// Analytics counts over the account, or over one campaign when
	// campaignID is not empty (NOT_FOUND if it does not exist).
	Analytics(accountID, campaignID string) (Analytics, error)
	Events(accountID string, page PageRequest) (Page[Event], error)

	// Webhooks returns all the account's webhooks, oldest first.
	Webhooks(accountID string) ([]Webhook, error)
	// RecordDelivery stores a delivery attempt and assigns its ID.
	RecordDelivery(accountID string, d Delivery) error
	Deliveries(accountID string, page PageRequest) (Page[Delivery], error)
}
