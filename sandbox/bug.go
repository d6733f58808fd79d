package sandbox

import (
	"slices"
)

// Bug severities.
var Severities = []string{"low", "medium", "high", "critical"}

// Bug statuses.
const (
	BugNew        = "new"
	BugConfirmed  = "confirmed"
	BugInProgress = "in_progress"
	BugResolved   = "resolved"
	BugClosed     = "closed"
)

// BugStatuses lists every bug status in lifecycle order.
var BugStatuses = []string{BugNew, BugConfirmed, BugInProgress, BugResolved, BugClosed}

// Resolutions a resolved or closed bug can carry.
var Resolutions = []string{"fixed", "wont_fix", "duplicate", "cannot_reproduce", "not_a_bug"}

// bugMoves is the whole bug lifecycle: a status change not listed here is refused.
var bugMoves = map[string][]string{
	BugNew:        {BugConfirmed, BugClosed},
	BugConfirmed:  {BugInProgress, BugResolved, BugClosed},
	BugInProgress: {BugResolved, BugClosed},
	BugResolved:   {BugClosed, BugConfirmed},
	BugClosed:     {BugConfirmed},
}

// Bounds of a bug's fields.
const (
	MaxBugTitleLength       = 200
	MaxBugDescriptionLength = 10000
)

// Bug is a bug report a tester raised against a campaign.
type Bug struct {
	ID          string  `json:"id"`
	CampaignID  string  `json:"campaignId"`
	TesterID    string  `json:"testerId"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Severity    string  `json:"severity"`
	Status      string  `json:"status"`
	Resolution  *string `json:"resolution"`
	CreatedAt   Time    `json:"createdAt"`
	UpdatedAt   Time    `json:"updatedAt"`

	Seq uint64 `json:"-"`
}

func isOpen(status string) bool {
	return status != BugResolved && status != BugClosed
}

// BugPatch is a valid request to change a bug; nil fields stay as they are.
type BugPatch struct {
	Status     *string
	Resolution *string
}

// ParseBugPatch decodes and validates a PATCH body. Unknown status or
// resolution values are a VALIDATION_ERROR; whether the change is allowed for
// a given bug is decided by Bug.Apply.
func ParseBugPatch(body []byte) (BugPatch, error) {
	obj, err := decodeObject(body, "status", "resolution")
	if err != nil {
		return BugPatch{}, err
	}
	var p BugPatch
	if status, ok := obj.optionalString("status"); ok && obj.checkOneOf("status", status, BugStatuses) {
		p.Status = &status
	}
	if resolution, ok := obj.optionalString("resolution"); ok && obj.checkOneOf("resolution", resolution, Resolutions) {
		p.Resolution = &resolution
	}
	if !obj.has("status") && !obj.has("resolution") {
		obj.errs.add("status", "or resolution is required")
	}
	return p, obj.errs.err()
}

// Apply returns the bug as the patch leaves it, stamped with now, and whether
// anything changed. It returns INVALID_STATUS_TRANSITION for a move outside
// the lifecycle, a move to resolved or closed without a resolution, a
// resolution sent with a reopen, and a resolution on a bug that stays open.
func (b Bug) Apply(p BugPatch, now Time) (Bug, bool, error) {
	to := b.Status
	if p.Status != nil {
		to = *p.Status
	}
	moving := to != b.Status
	if moving && !slices.Contains(bugMoves[b.Status], to) {
		return b, false, Errorf(ErrInvalidStatusTransition,
			"a bug cannot move from %s to %s; from %s it can move to %v", b.Status, to, b.Status, bugMoves[b.Status])
	}
	reopening := moving && !isOpen(b.Status) && isOpen(to)
	switch {
	case p.Resolution != nil && reopening:
		return b, false, Errorf(ErrInvalidStatusTransition, "reopening a bug clears its resolution; do not send one")
	case p.Resolution != nil && isOpen(to):
		return b, false, Errorf(ErrInvalidStatusTransition,
			"a resolution can only be set on a resolved or closed bug, or with a move to one (this bug is %s)", to)
	case moving && !isOpen(to) && p.Resolution == nil && b.Resolution == nil:
		return b, false, Errorf(ErrInvalidStatusTransition, "moving a bug to %s needs a resolution", to)
	}

	next := b
	next.Status = to
	switch {
	case reopening:
		next.Resolution = nil
	case p.Resolution != nil:
		next.Resolution = p.Resolution
	}
	changed := next.Status != b.Status || !equalOptional(next.Resolution, b.Resolution)
	if changed {
		next.UpdatedAt = now
	}
	return next, changed, nil
}

func equalOptional(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// BugInput is a valid report of a new bug, as a tester files it.
type BugInput struct {
	CampaignID  string
	TesterID    string
	Title       string
	Description string
	Severity    string
}

// ParseBugInput decodes and validates a bug report. TesterID may be empty, in
// which case the store picks one of the account's testers.
func ParseBugInput(body []byte) (BugInput, error) {
	obj, err := decodeObject(body, "campaignId", "testerId", "title", "description", "severity")
	if err != nil {
		return BugInput{}, err
	}
	var in BugInput
	in.CampaignID, _ = obj.requireString("campaignId")
	in.TesterID, _ = obj.optionalString("testerId")
	if title, ok := obj.requireString("title"); ok {
		obj.checkText("title", title, MaxBugTitleLength)
		in.Title = title
	}
	if description, ok := obj.optionalString("description"); ok {
		if len([]rune(description)) > MaxBugDescriptionLength {
			obj.errs.add("description", "must be at most %d characters", MaxBugDescriptionLength)
		}
		in.Description = description
	}
	if severity, ok := obj.requireString("severity"); ok && obj.checkOneOf("severity", severity, Severities) {
		in.Severity = severity
	}
	return in, obj.errs.err()
}

// BugFilter narrows a bug list; empty fields match everything.
type BugFilter struct {
	CampaignID string
	TesterID   string
	Status     string
	Severity   string
}

// Validate returns an INVALID_PARAMETER error for an unknown filter value.
func (f BugFilter) Validate() error {
	if err := checkParameter("status", f.Status, BugStatuses); err != nil {
		return err
	}
	return checkParameter("severity", f.Severity, Severities)
}

// Match reports whether b passes the filter.
func (f BugFilter) Match(b *Bug) bool {
	return matches(f.CampaignID, b.CampaignID) && matches(f.TesterID, b.TesterID) &&
		matches(f.Status, b.Status) && matches(f.Severity, b.Severity)
}
