package sandbox

import "slices"

// Tester is a person who tests campaigns and files bugs.
type Tester struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Platforms []string `json:"platforms"`
	Country   string   `json:"country"`
	Rating    Decimal  `json:"rating"`
	Available bool     `json:"available"`
	CreatedAt Time     `json:"createdAt"`

	Seq uint64 `json:"-"`
}

// TesterFilter narrows a tester list; an empty platform matches everything.
type TesterFilter struct {
	Platform string
}

// Validate returns an INVALID_PARAMETER error for an unknown platform.
func (f TesterFilter) Validate() error {
	return checkParameter("platform", f.Platform, Platforms)
}

// Match reports whether t passes the filter.
func (f TesterFilter) Match(t *Tester) bool {
	return f.Platform == "" || slices.Contains(t.Platforms, f.Platform)
}
