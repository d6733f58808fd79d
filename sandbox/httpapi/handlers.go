package httpapi

import (
	"net/http"

	"github.com/testcampaign/kit/sandbox"
)

func (s *Server) listCampaigns(r *http.Request) (any, error) {
	q := queryOf(r)
	filter := sandbox.CampaignFilter{Status: q.Get("status"), Platform: q.Get("platform")}
	if err := filter.Validate(); err != nil {
		return nil, err
	}
	page, err := pageRequest(r)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Store.Campaigns(r.Context(), filter, page)
}

func (s *Server) createCampaign(r *http.Request) (any, error) {
	in, err := parseBody(r, sandbox.ParseCampaignInput)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Store.CreateCampaign(r.Context(), in)
}

func (s *Server) getCampaign(r *http.Request) (any, error) {
	return accountOf(r).Store.Campaign(r.Context(), routeID(r))
}

func (s *Server) listBugs(r *http.Request) (any, error) {
	q := queryOf(r)
	filter := sandbox.BugFilter{
		CampaignID: q.Get("campaignId"), TesterID: q.Get("testerId"),
		Status: q.Get("status"), Severity: q.Get("severity"),
	}
	if err := filter.Validate(); err != nil {
		return nil, err
	}
	page, err := pageRequest(r)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Store.Bugs(r.Context(), filter, page)
}

func (s *Server) updateBug(r *http.Request) (any, error) {
	patch, err := parseBody(r, sandbox.ParseBugPatch)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Store.UpdateBug(r.Context(), routeID(r), patch)
}

func (s *Server) createWebhook(r *http.Request) (any, error) {
	in, err := parseBody(r, sandbox.ParseWebhookInput)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Store.CreateWebhook(r.Context(), in)
}

func (s *Server) listTesters(r *http.Request) (any, error) {
	filter := sandbox.TesterFilter{Platform: queryOf(r).Get("platform")}
	if err := filter.Validate(); err != nil {
		return nil, err
	}
	page, err := pageRequest(r)
	if err != nil {
		return nil, err
	}
	return accountOf(r).Store.Testers(r.Context(), filter, page)
}

func (s *Server) analytics(r *http.Request) (any, error) {
	return accountOf(r).Store.Analytics(r.Context(), queryOf(r).Get("campaignId"))
}
