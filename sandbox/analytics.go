package sandbox

// Analytics are bug counts over an account, or over one campaign when
// CampaignID is set.
type Analytics struct {
	CampaignID *string  `json:"campaignId"`
	Campaigns  int      `json:"campaigns"`
	Bugs       BugStats `json:"bugs"`
}

// BugStats counts bugs; every status and severity is present, zero or not, so
// clients can read them without checking for absence.
type BugStats struct {
	Total      int            `json:"total"`
	ByStatus   map[string]int `json:"byStatus"`
	BySeverity map[string]int `json:"bySeverity"`
}

// NewBugStats returns stats with every status and severity at zero.
func NewBugStats() BugStats {
	stats := BugStats{ByStatus: map[string]int{}, BySeverity: map[string]int{}}
	for _, s := range BugStatuses {
		stats.ByStatus[s] = 0
	}
	for _, s := range Severities {
		stats.BySeverity[s] = 0
	}
	return stats
}
