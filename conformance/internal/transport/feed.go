package transport

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// feedModel hands exchange e of a scenario, sent as req in the flight fl
// of the key token, to the model; a disagreement fails the step that sent it, with
// the requests of the key that led there.
func (t *Target) feedModel(fl *model.Flight, sink *rules.Sink, token string, req *http.Request, e *wire.Exchange) {
	level := docs.Should
	if t.Profile == kit.ProfileSandbox {
		level = docs.Sandbox
	}
	found := t.Model.Observe(fl, e)
	if len(found) == 0 {
		return
	}
	history := t.Model.HistoryOf(token)
	where := req.Method + " " + req.URL.Path
	for _, d := range found {
		msg := fmt.Sprintf("want %s, got %s", d.Want, d.Got)
		if len(history) > 0 {
			msg += "\nrequests of this key, oldest first, up to this one:\n  " + strings.Join(history, "\n  ")
		}
		sink.Add(rules.RuleViolation{ID: d.ID, Rule: model.RuleModel + ": " + d.ID + " " + d.Rule, Level: level, Area: model.RuleModel, Message: msg, Request: where, Exchange: e})
	}
}
