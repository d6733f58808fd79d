package report

import "github.com/testcampaign/kit/conformance/internal/wire"

// Areas in report order: those of the built-in suite. Scenarios of other
// features are reported under their file name.
var AreaOrder = [...]string{"envelope", "auth", "errors", "ratelimit", "campaigns", "bugs", "webhooks", "testers", "analytics", "versioning", "events", "clock", "reset", "controls", "journal", wire.AreaSchema}
