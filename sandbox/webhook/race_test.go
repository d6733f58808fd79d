//go:build race

package webhook_test

// raceEnabled is true under the race detector, which slows the heap
// measurements down tenfold and adds to what they measure.
const raceEnabled = true
