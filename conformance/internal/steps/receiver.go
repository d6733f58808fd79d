package steps

import (
	"fmt"

	"github.com/testcampaign/kit/conformance/internal/receiver"
	"github.com/testcampaign/kit/conformance/kit"
)

// endpoint returns the scenario's endpoint on the receiver, opening it on
// first use.
func (s *scenarioState) endpoint() (*receiver.Endpoint, string, error) {
	if s.hooks == nil {
		return nil, "", fmt.Errorf("%w: no webhook receiver runs; tag the scenario @delivery", kit.ErrUsage)
	}
	if s.hook == nil {
		s.hook, s.hookURLOpen = s.hooks.Open(s.t.Schema, s.sink)
	}
	return s.hook, s.hookURLOpen, nil
}

// hookURL is the {webhookURL} placeholder: the scenario's receiver address,
// or, when no receiver runs, a loopback URL that no one answers (port 9 is
// discard), so that a registration never points at someone else's server.
func (s *scenarioState) hookURL() string {
	_, u, err := s.endpoint()
	if err != nil {
		return "http://127.0.0.1:9/conform-no-receiver"
	}
	return u
}

// close ends the scenario. Its fresh accounts leave the model, since
// nothing else knows their keys, and its endpoint is forgotten: late
// deliveries get a 404, which the deployment may retry but nobody records.
func (s *scenarioState) close() {
	for _, k := range s.fresh {
		s.t.Model.Drop(k)
	}
	if s.hooks != nil && s.hook != nil {
		s.hooks.Close(s.hook)
	}
}
