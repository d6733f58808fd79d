package transport

import (
	"net/http"

	"github.com/testcampaign/kit/conformance/coverage"
	"github.com/testcampaign/kit/conformance/model"
	"github.com/testcampaign/kit/conformance/rules"
)

// Target is what every scenario of one run shares: where to send requests and
// with which credentials. It is read-only once the run starts.
type Target struct {
	BaseURL string
	Key     string
	Profile string
	Client  *http.Client
	Redact  func(string) string
	Budget  *Budget
	// Schema checks every exchange and delivery when --openapi is set.
	Schema rules.Schema
	// Model checks every exchange of a scenario against the contract.
	Model *model.Model
	// Coverage counts, per rule of docs/contract.md, the exchanges of the
	// run judged against it.
	Coverage *coverage.Recorder
}
