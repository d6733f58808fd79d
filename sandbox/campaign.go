package sandbox

// Platforms a campaign can target.
var Platforms = []string{"ios", "android", "web"}

// Campaign statuses. Only draft is reachable through the API; the others
// appear in seeded data so that status filters have something to find.
const (
	CampaignDraft     = "draft"
	CampaignActive    = "active"
	CampaignCompleted = "completed"
)

// CampaignStatuses lists every campaign status, for filter validation.
var CampaignStatuses = []string{CampaignDraft, CampaignActive, CampaignCompleted}

// Bounds of a campaign's fields.
const (
	MaxCampaignNameLength = 200
	MaxTestersRequired    = 10000
	MaxRewardPerBug       = 100000
	RewardDecimalPlaces   = 2
)

// Campaign is a test campaign.
type Campaign struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	Platform        string  `json:"platform"`
	TestersRequired int     `json:"testersRequired"`
	RewardPerBug    Decimal `json:"rewardPerBug"`
	Status          string  `json:"status"`
	CreatedAt       Time    `json:"createdAt"`

	Seq uint64 `json:"-"`
}

// CampaignInput is a valid request to create a campaign.
type CampaignInput struct {
	Name            string
	Platform        string
	TestersRequired int
	RewardPerBug    Decimal
}

// ParseCampaignInput decodes and validates a create-campaign body. It returns
// an INVALID_JSON error for a body that is not one JSON object, and a
// VALIDATION_ERROR listing every invalid field otherwise. Unknown fields are
// ignored so that clients written against a later API keep working.
func ParseCampaignInput(body []byte) (CampaignInput, error) {
	obj, err := decodeObject(body, "name", "platform", "testersRequired", "rewardPerBug")
	if err != nil {
		return CampaignInput{}, err
	}
	var in CampaignInput
	if name, ok := obj.requireString("name"); ok {
		obj.checkText("name", name, MaxCampaignNameLength)
		in.Name = name
	}
	if platform, ok := obj.requireString("platform"); ok && obj.checkOneOf("platform", platform, Platforms) {
		in.Platform = platform
	}
	if n, ok := obj.requireNumber("testersRequired"); ok {
		in.TestersRequired = obj.checkInteger("testersRequired", n, 1, MaxTestersRequired)
	}
	if n, ok := obj.requireNumber("rewardPerBug"); ok {
		in.RewardPerBug, _ = obj.checkDecimal("rewardPerBug", n, MaxRewardPerBug, RewardDecimalPlaces)
	}
	return in, obj.errs.err()
}

// CampaignFilter narrows a campaign list; empty fields match everything.
type CampaignFilter struct {
	Status   string
	Platform string
}

// Validate returns an INVALID_PARAMETER error for an unknown filter value.
func (f CampaignFilter) Validate() error {
	if err := checkParameter("status", f.Status, CampaignStatuses); err != nil {
		return err
	}
	return checkParameter("platform", f.Platform, Platforms)
}

// Match reports whether c passes the filter.
func (f CampaignFilter) Match(c *Campaign) bool {
	return matches(f.Status, c.Status) && matches(f.Platform, c.Platform)
}
