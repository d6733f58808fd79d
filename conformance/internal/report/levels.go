package report

// Levels of the rules of docs/contract.md, and of the scenarios' tags.
const (
	LevelMust    = "must"
	LevelShould  = "should"
	LevelSandbox = "sandbox"
)

// Areas in report order: those of the built-in suite. Scenarios of other
// features are reported under their file name.
var AreaOrder = [...]string{"envelope", "auth", "errors", "ratelimit", "campaigns", "bugs", "webhooks", "testers", "analytics", "versioning", "events", "clock", "reset", "controls", "journal", AreaSchema}

// AreaSchema is where --openapi reports exchanges that break the document,
// whatever scenario made them.
const AreaSchema = "schema"
