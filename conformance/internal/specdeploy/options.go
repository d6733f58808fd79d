// Package specdeploy is a deployment of the Test-Campaign Service API v1
// written from the published spec alone, in memory, for the kit's own
// tests. It shares nothing with the sandbox: wherever the spec says "not
// shown" it makes choices of its own, and Options switches each of them to
// another reading a real deployment might make. A Break switches off one
// rule the spec states, so that a test can prove the kit catches it.
package specdeploy

// Options are the readings of what the spec leaves open; the zero value is
// the deployment's own default reading. Every field is one switch.
type Options struct {
	// UUIDIDs assigns random UUIDs instead of prefixed sequence numbers.
	UUIDIDs bool
	// MalformedIDIs400 answers 400 for an id that is not of the
	// deployment's own form, before looking it up.
	MalformedIDIs400 bool
	// PageNumberPaging pages lists with page and perPage instead of a
	// cursor.
	PageNumberPaging bool
	// ListUnderResourceName puts list items under data.campaigns,
	// data.bugs, data.testers instead of data.items.
	ListUnderResourceName bool
	// OldestFirst orders lists oldest first.
	OldestFirst bool
	// PythonISOFormat writes timestamps as Python's isoformat does:
	// microseconds and +00:00.
	PythonISOFormat bool
	// BasicISO8601 writes timestamps in ISO 8601 basic format,
	// 20261127T062614Z.
	BasicISO8601 bool
	// ResetUnixMillis gives X-RateLimit-Reset in Unix milliseconds.
	ResetUnixMillis bool
	// ResetSecondsUntil gives X-RateLimit-Reset as seconds until the reset.
	ResetSecondsUntil bool
	// WindowFromFirstRequest opens a key's window at its first request
	// instead of at the start of the clock's minute.
	WindowFromFirstRequest bool
	// TokenBucket limits with a token bucket refilled continuously.
	TokenBucket bool
	// LowerLimit enforces 300 requests a minute, below the published
	// maximum.
	LowerLimit bool
	// HourlyWindowHeaders reports the hour's window in the headers.
	HourlyWindowHeaders bool
	// OwnErrorCodes uses codes of its own for every error but
	// INVALID_API_KEY, the one the spec names.
	OwnErrorCodes bool
	// LiveKeysAccepted accepts svc_live_ keys as well as svc_test_ keys.
	LiveKeysAccepted bool
	// MissingHeaderIs403 answers a request without Authorization with 403.
	MissingHeaderIs403 bool
	// Created201 answers a creation with 201.
	Created201 bool
	// WrongType422 answers a field of the wrong type with 422.
	WrongType422 bool
	// MinimumFive requires at least 5 testers and a reward of at least 5.
	MinimumFive bool
	// UniqueNamesPerAccount refuses a campaign name the account already
	// has with 409.
	UniqueNamesPerAccount bool
	// QuotaOf20 lets a key hold at most 20 campaigns.
	QuotaOf20 bool
	// MobilePlatformsOnly accepts only ios and android.
	MobilePlatformsOnly bool
	// ExtraFields returns fields the spec does not list on every record.
	ExtraFields bool
	// OwnBugStatuses uses its own bug status words and checks a PATCH
	// body before looking the bug up.
	OwnBugStatuses bool
	// WebhookCallbackURL names the webhook's address callbackUrl, not url.
	WebhookCallbackURL bool

	// Break, if set, breaks one rule the spec states.
	Break Break
}

// Reading is one named reading of what the spec leaves open.
type Reading struct {
	Name    string
	Options Options
}

// Readings lists the default reading and each switch alone.
func Readings() []Reading {
	return []Reading{
		{"default", Options{}},
		{"UUID ids", Options{UUIDIDs: true}},
		{"400 for an id not of its form", Options{UUIDIDs: true, MalformedIDIs400: true}},
		{"page-number paging", Options{PageNumberPaging: true}},
		{"list under data.campaigns", Options{ListUnderResourceName: true}},
		{"oldest first", Options{OldestFirst: true}},
		{"Python isoformat timestamps", Options{PythonISOFormat: true}},
		{"ISO 8601 basic format timestamps", Options{BasicISO8601: true}},
		{"X-RateLimit-Reset in Unix ms", Options{ResetUnixMillis: true}},
		{"X-RateLimit-Reset in seconds until", Options{ResetSecondsUntil: true}},
		{"windows opened by a key's first request", Options{WindowFromFirstRequest: true}},
		{"token-bucket limiter", Options{TokenBucket: true}},
		{"300 a minute", Options{LowerLimit: true}},
		{"hourly window in the headers", Options{HourlyWindowHeaders: true}},
		{"own error codes", Options{OwnErrorCodes: true}},
		{"live keys accepted", Options{LiveKeysAccepted: true}},
		{"403 without Authorization", Options{MissingHeaderIs403: true}},
		{"201 on create", Options{Created201: true}},
		{"422 for wrong types", Options{WrongType422: true}},
		{"min 5 testers and reward", Options{MinimumFive: true}},
		{"names unique per account", Options{UniqueNamesPerAccount: true}},
		{"20 campaigns per key", Options{QuotaOf20: true}},
		{"mobile platforms only", Options{MobilePlatformsOnly: true}},
		{"extra fields", Options{ExtraFields: true}},
		{"own bug statuses, body checked first", Options{OwnBugStatuses: true}},
		{"webhook address as callbackUrl", Options{WebhookCallbackURL: true}},
	}
}

// Break is one rule of the spec a deployment breaks.
type Break string

// The breaks, each of one rule the spec states.
const (
	BreakNone Break = ""
	// Rate-limit headers (spec §8).
	BreakRemainingCountsUp   Break = "X-RateLimit-Remaining counts up"
	BreakResetInPast         Break = "X-RateLimit-Reset is the previous window's start"
	BreakLimitOverMaximum    Break = "X-RateLimit-Limit 20000 a minute"
	BreakNever429            Break = "never refuses past the limit"
	BreakRemainingOverLimit  Break = "X-RateLimit-Remaining above the limit"
	BreakResetNotInteger     Break = "X-RateLimit-Reset an HTTP date"
	BreakNoRateHeadersBeta   Break = "no rate-limit headers on beta endpoints"
	BreakNoRateHeadersCreate Break = "no rate-limit headers on create"
	BreakNoRateHeadersHook   Break = "no rate-limit headers on webhook registration"
	BreakLimitChanges        Break = "X-RateLimit-Limit follows Remaining down"
	// The envelope (spec §4, §7).
	BreakNoEnvelopeOnSuccess Break = "success answers without the envelope"
	BreakSuccessString       Break = `"success" is the string "true"`
	BreakNoSuccessOnFailure  Break = `"success" missing from failures`
	BreakErrorMessageNull    Break = `"error.message" null on 404`
	BreakErrorStatusMismatch Break = `"error.status" differs from the HTTP status`
	BreakErrorStatusString   Break = `"error.status" a string`
	BreakErrorWithoutCode    Break = `"error.code" missing`
	BreakDataArray           Break = `"data" an array on bug lists`
	BreakDataNullAnalytics   Break = `"data" null on analytics`
	BreakTextContentType     Break = "text/plain content type"
	BreakPatchNoEnvelope     Break = "PATCH success without the envelope"
	BreakWebhookNoEnvelope   Break = "webhook registration success without the envelope"
	// Authentication (spec §5).
	BreakBareKeyAccepted      Break = "a key without the Bearer scheme accepted"
	BreakNoKeyAccepted        Break = "a request without a key accepted"
	BreakInvalidKey403        Break = "403 for an invalid key"
	BreakInvalidKeyCode       Break = "401 with another code than INVALID_API_KEY"
	BreakAnalyticsUnprotected Break = "analytics without authentication"
	// Campaigns (spec §2, §3).
	BreakNotDraft            Break = "a new campaign is pending"
	BreakCreatedAtUnix       Break = "createdAt a Unix number"
	BreakCreatedAtNotISO     Break = "createdAt not ISO 8601"
	BreakIDNumber            Break = "id a number"
	BreakNameNotEchoed       Break = "name missing from the creation answer"
	BreakRewardString        Break = "rewardPerBug read back as a string"
	BreakReadBackNotFound    Break = "a created campaign cannot be read back"
	BreakCreatedNotListed    Break = "a created campaign missing from the list"
	BreakCreateAnswers500    Break = "creation answers 500 with the success envelope"
	BreakReadBackNoStatus    Break = "a campaign read back has no status"
	BreakTestersMissing      Break = "GET /v1/testers is 404"
	BreakServedWithoutV1     Break = "the API answers without the /v1 prefix"
	BreakPatchChangesNothing Break = "PATCH success leaves the bug unchanged"
)

// Breaks lists every break.
func Breaks() []Break {
	return []Break{
		BreakRemainingCountsUp, BreakResetInPast, BreakLimitOverMaximum, BreakNever429,
		BreakRemainingOverLimit, BreakResetNotInteger, BreakNoRateHeadersBeta,
		BreakNoRateHeadersCreate, BreakNoRateHeadersHook, BreakLimitChanges,
		BreakNoEnvelopeOnSuccess, BreakSuccessString, BreakNoSuccessOnFailure,
		BreakErrorMessageNull, BreakErrorStatusMismatch, BreakErrorStatusString,
		BreakErrorWithoutCode, BreakDataArray, BreakDataNullAnalytics, BreakTextContentType,
		BreakPatchNoEnvelope, BreakWebhookNoEnvelope,
		BreakBareKeyAccepted, BreakNoKeyAccepted, BreakInvalidKey403, BreakInvalidKeyCode,
		BreakAnalyticsUnprotected,
		BreakNotDraft, BreakCreatedAtUnix, BreakCreatedAtNotISO, BreakIDNumber,
		BreakNameNotEchoed, BreakRewardString, BreakReadBackNotFound, BreakCreatedNotListed,
		BreakCreateAnswers500, BreakReadBackNoStatus, BreakTestersMissing, BreakServedWithoutV1,
		BreakPatchChangesNothing,
	}
}
