package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// clientVerdict is what GET /_sandbox/verdict answers of the client that
// used the scenario's key, as far as the steps read it.
type clientVerdict struct {
	Held  bool `json:"held"`
	Rules []struct {
		ID      string `json:"id"`
		Outcome string `json:"outcome"`
		Breaks  []struct {
			Why string `json:"why"`
		} `json:"breaks"`
	} `json:"rules"`
}

// askVerdict asks the sandbox for its verdict on the client of the
// scenario's key: a scenario that drives a client (through its CLI or a
// test hook) with the key then asserts what the sandbox judged of it.
func (s *scenarioState) askVerdict(ctx context.Context) (clientVerdict, error) {
	var v clientVerdict
	ex, err := s.send(ctx, http.MethodGet, "/_sandbox/verdict", nil, "")
	if err != nil {
		return v, err
	}
	if ex.Status != http.StatusOK {
		return v, fmt.Errorf("GET /_sandbox/verdict answered %d, not 200: the deployment judges no client (a sandbox does)", ex.Status)
	}
	var envelope struct {
		Data *clientVerdict `json:"data"`
	}
	if err := json.Unmarshal(ex.Body, &envelope); err != nil || envelope.Data == nil {
		return v, fmt.Errorf("GET /_sandbox/verdict answered no verdict in its envelope: %.200s", ex.Body)
	}
	return *envelope.Data, nil
}

// brokenClientRules lists the broken rules of a verdict with their breaks.
func (v clientVerdict) brokenClientRules() string {
	var b strings.Builder
	for _, r := range v.Rules {
		if r.Outcome != "broken" {
			continue
		}
		fmt.Fprintf(&b, "\n%s broken:", r.ID)
		for _, br := range r.Breaks {
			fmt.Fprintf(&b, "\n  - %s", br.Why)
		}
	}
	return b.String()
}

func (s *scenarioState) clientHeldEveryRule(ctx context.Context) error {
	v, err := s.askVerdict(ctx)
	if err != nil {
		return err
	}
	if !v.Held {
		return fmt.Errorf("the client broke client rules:%s", v.brokenClientRules())
	}
	return nil
}

func (s *scenarioState) clientRuleIs(ctx context.Context, id, outcome string) error {
	v, err := s.askVerdict(ctx)
	if err != nil {
		return err
	}
	for _, r := range v.Rules {
		if r.ID != id {
			continue
		}
		if r.Outcome != outcome {
			return fmt.Errorf("the client rule %s is %s, not %s%s", id, r.Outcome, outcome, v.brokenClientRules())
		}
		return nil
	}
	return fmt.Errorf("the verdict has no client rule %s", id)
}
