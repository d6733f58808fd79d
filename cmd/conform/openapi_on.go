//go:build openapi

package main

import "github.com/testcampaign/kit/conformance/openapicheck"

// schemaLoader is the OpenAPI validator --openapi uses; this build has it.
var schemaLoader = openapicheck.Load
