package transport

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// feedModel hands one exchange of a scenario to the model; a disagreement
// fails the scenario that received it, with the requests of the key that
// led there.
func (t *Target) feedModel(fl *model.Flight, sink *rules.Sink, token string, req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	o := &model.Observed{
		Key: token, Method: req.Method, Path: req.URL.Path, Query: req.URL.Query(), RawQuery: req.URL.RawQuery,
		ReqHeader: req.Header, ReqBody: reqBody, Status: resp.StatusCode, Header: resp.Header, Body: body,
	}
	o.V, _ = wire.DecodeJSON(body)
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		o.Date = d
	}
	level := wire.LevelShould
	if t.Profile == wire.ProfileSandbox {
		level = wire.LevelSandbox
	}
	found := t.Model.Observe(fl, o)
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
		sink.Add(rules.RuleViolation{ID: d.ID, Rule: model.RuleModel + ": " + d.ID + " " + d.Rule, Level: level, Area: model.RuleModel, Message: msg, Request: where})
	}
}
