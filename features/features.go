// Package features holds the built-in conformance suite: one Gherkin file per
// area of the Test-Campaign API v1, written from the published specification.
//
// The files are embedded so that the conform binary carries its suite with it
// and runs the same checks wherever it is copied.
package features

import "embed"

// FS holds every built-in .feature file at its root.
//
//go:embed *.feature
var FS embed.FS
