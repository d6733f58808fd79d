package coverage

// beyondTheWire are the rules no exchange with a deployment can show to
// hold or not, and why: they are about the process, its start-up or its
// log, not about what it answers.
var beyondTheWire = map[string]string{
	"AUTH-16": "it is about the sandbox's own log",
	"ROUTE-8": "it is a label of the documentation",
	"ACCT-11": "a bad fixture stops the sandbox at start-up, before any request",
	"RATE-13": "it is about start-up flags; a run sees the limit in force (RATE-2), not the flag that set it",
	"ERR-23":  "no request can make a correct sandbox fail on its own; the answer of a planned 500 is FAULT-13",
	"SHR-11":  "it is about how secrets are derived; the server secret is never sent",
	"SHR-13":  "it is about the process's handling of signals",
	"WEB-6":   "it is about the sandbox's standard output at start-up",
	"WEB-8":   "it is about the sandbox's standard output and log at start-up",
	"DLV-21":  "it is about the environment of the sandbox's process",
	"SHR-4":   "it is about the memory the accounts take inside the process",
}

// needsConfiguration are the rules a sandbox shows only when started with
// other flags than the default ones, or with one the run cannot see. Such
// a rule is not applicable to a run that did not judge it.
var needsConfiguration = map[string]string{
	"ACCT-8":  "a sandbox started with -frozen-clock",
	"ACCT-9":  "a sandbox started with an -account-ttl short enough to wait out, or a small -max-accounts",
	"ACCT-10": "a sandbox started with an -account-ttl short enough to wait out, or a small -max-accounts",
	"RATE-16": "a sandbox started with -frozen-clock",
	"CLK-1":   "a sandbox started with -frozen-clock",
	"CLK-2":   "a sandbox started with -frozen-clock",
	"CLK-3":   "a sandbox started with -frozen-clock",
	"CLK-5":   "a sandbox started with -frozen-clock",
	"CLK-9":   "a sandbox started with -frozen-clock",
	"RESET-6": "a sandbox started with -frozen-clock, whose instant a reset goes back to",
	"DLV-18":  "a sandbox started with -webhook-deny-private",
	"DLV-19":  "a sandbox started with -webhook-loopback-only",
	"SHR-3":   "a sandbox started with -trust-forwarded-for",
	"SHR-5":   "a sandbox started with a small -memory-budget",
	"SHR-6":   "a sandbox started with a small -max-records",
	"SHR-8":   "a sandbox started with a small -max-conns",
	"SHR-9":   "a sandbox started with short -idle-timeout and -write-timeout",
	"WEB-2":   "a sandbox started with -cors-origins",
	"WEB-3":   "a sandbox started with -cors-origins",
	"WEB-7":   "a sandbox started with -cors-origins",
	"WEB-4":   "a sandbox started with -tls-cert and -tls-key",
	"WEB-5":   "a sandbox started with -tls-self-signed",
	"WEB-9":   "a sandbox started with -tls-cert and -tls-key or -tls-self-signed, asked in plain HTTP",
}

// notInDefaultRun are the rules a default run against a default sandbox
// does not reach, and why: the time or load it would take, or the lack of
// a check. They end a run as not exercised, with the reason, so that the
// lost coverage is in every report.
var notInDefaultRun = map[string]string{
	"ERR-24":  "the HTTP server closes the connection after its 431, so a client still sending headers that large often sees a reset instead: a default run cannot count on it; the kit judges every 431 a run meets",
	"ERR-21":  "it takes 30 s of a stalled body, twice the default run's budget",
	"EVT-5":   "it takes more than 10000 events in one account",
	"DLV-22":  "it takes 256 deliveries waiting in one account",
	"DLV-23":  "it takes deliveries of several accounts held in flight at once",
	"SHR-1":   "it takes 60000 requests from one address in a minute",
	"SHR-2":   "it takes 5000 new accounts from one address in a minute",
	"ERR-13":  "it takes a body cut short of its Content-Length, which no HTTP client sends: only a hand-written request shows it",
	"RATE-15": "it takes a per-client budget spent: 60000 requests from one address in a minute",
}

// NoCheckYet is the reason of the rules the kit does not check yet; a rule
// that gains a check leaves that list.
const NoCheckYet = "the kit has no check of it yet"

// untouched is the reason of a rule the kit checks when a run makes the
// traffic it is judged on, and this run did not: a user's scenarios and
// the explorer's reach further than the built-in ones.
const untouched = "the kit checks it, but nothing in this run made the traffic it is judged on"

// NotInDefaultRun returns why a default run does not reach the rule, if it
// does not.
func NotInDefaultRun(id string) (string, bool) {
	r, ok := notInDefaultRun[id]
	return r, ok
}
