package openapitest

import (
	"net/http"
	"strings"

	"github.com/testcampaign/kit/openapi"
)

// Lag is a place where the sandbox does not yet do what CONTRACT.md says,
// and so breaks the document, which describes the contract. Violations a lag
// explains do not fail the test that shows them; each lag has its own test,
// skipped with its reason while the lag lasts and failing once the sandbox
// has caught up, so the entry is removed then.
type Lag struct {
	Name   string
	Reason string
	match  func(r *http.Request, v openapi.Violation) bool
}

// Lags are the known lags.
var Lags = []Lag{
	{
		Name:   "timestamps",
		Reason: "timestamps must have exactly three fractional digits (2026-01-01T00:00:30.000Z); the sandbox writes RFC3339Nano, which drops trailing zeros",
		match: func(_ *http.Request, v openapi.Violation) bool {
			return (strings.HasPrefix(v.In, "response") || strings.HasPrefix(v.In, "webhook")) &&
				strings.Contains(v.Message, timestampPattern)
		},
	},
	{
		Name:   "control rate-limit headers",
		Reason: "the /_sandbox controls must carry the rate-limit headers of their own per-key budget; the sandbox sends none on them",
		match: func(r *http.Request, v openapi.Violation) bool {
			return strings.HasPrefix(r.URL.Path, "/_sandbox/") && v.In == "response header" &&
				strings.HasPrefix(v.Path, "X-RateLimit-")
		},
	},
}

// timestampPattern is components.schemas.Timestamp's pattern, as violation
// messages quote it.
const timestampPattern = `\\.[0-9]{3}Z$`

// KnownLag returns the lag that explains v, seen on r, or nil.
func KnownLag(r *http.Request, v openapi.Violation) *Lag {
	for i := range Lags {
		if Lags[i].match(r, v) {
			return &Lags[i]
		}
	}
	return nil
}
