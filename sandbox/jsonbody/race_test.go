//go:build race

package jsonbody

// raceEnabled is true under the race detector, whose sync.Pool drops a share
// of what is put back on purpose.
const raceEnabled = true
