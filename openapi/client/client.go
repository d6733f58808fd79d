// Package client is a Go client of the Test-Campaign Service API v1,
// generated from the OpenAPI document by oapi-codegen. It is also the
// proof that the document generates a working SDK: its tests run an
// SDK-style flow against the sandbox.
package client

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../document/openapi.yaml
