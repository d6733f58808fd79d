// Package document embeds the OpenAPI 3.1 description of the Test-Campaign
// Service API v1, as the sandbox implements it, and nothing else: the sandbox
// serves it without linking the validator that the openapi package builds on
// it, which would more than double what a first build compiles.
package document

import (
	"bytes"
	_ "embed"
)

//go:generate go run ../internal/tojson openapi.yaml openapi.json

var (
	//go:embed openapi.yaml
	yamlDoc []byte
	//go:embed openapi.json
	jsonDoc []byte
)

// YAML returns the document as it is written, in YAML.
func YAML() []byte { return bytes.Clone(yamlDoc) }

// JSON returns the document in JSON, rendered from the YAML by go generate.
func JSON() []byte { return bytes.Clone(jsonDoc) }
