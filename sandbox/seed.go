package sandbox

import "time"

// Seed is the data every new account starts with. Ages are relative to the
// moment the account is seeded, so seeded records look recent whatever the
// clock says.
type Seed struct {
	Testers   []SeedTester
	Campaigns []SeedCampaign
	Bugs      []SeedBug
}

// SeedTester is a tester to seed; its ID, account and times are assigned then.
type SeedTester struct {
	Tester
	Age time.Duration
}

// SeedCampaign is a campaign to seed.
type SeedCampaign struct {
	Campaign
	Age time.Duration
}

// SeedBug is a bug to seed, filed by Seed.Testers[TesterIndex] against
// Seed.Campaigns[CampaignIndex].
type SeedBug struct {
	Bug
	CampaignIndex int
	TesterIndex   int
	Age           time.Duration
	UpdatedAge    time.Duration
}
