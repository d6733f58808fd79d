package conformance_test

// unprovenYet are the rules the kit reports as checked that no proof
// breaks yet, each with what stands in the way. The list only shrinks: a
// rule leaves it with its proof.
var unprovenYet = map[string]bool{
	// The 431 is the HTTP server's own, before any handler a breaker
	// could wrap, and conform's client sees the connection reset rather
	// than the answer.
	"ERR-24": true,
	// A counted 429 shows only once the hour's window has fewer left
	// than the minute's: over 8000 refused requests at the default limits.
	"RATE-12": true,
	// IDs that carry on after a reset, faked by a proxy, mean translating
	// every ID the run sees, journal paths included.
	"RESET-3": true,
}
