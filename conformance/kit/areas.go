package kit

// Areas in report order: those of the built-in suite. Scenarios of other
// features are reported under their file name.
var AreaOrder = [...]string{"envelope", "auth", "errors", "ratelimit", "campaigns", "bugs", "webhooks", "testers", "analytics", "versioning", "events", "clock", "reset", "controls", "journal", AreaSchema}
