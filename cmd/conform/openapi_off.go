//go:build !openapi

package main

import "github.com/testcampaign/kit/conformance/kit"

// schemaLoader is nil: this build leaves the OpenAPI validator out, which
// makes conform build in a fraction of the time. --openapi then says how
// to build it in (go build -tags openapi ./cmd/conform).
var schemaLoader kit.SchemaLoader
