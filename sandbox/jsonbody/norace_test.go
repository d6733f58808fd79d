//go:build !race

package jsonbody

const raceEnabled = false
