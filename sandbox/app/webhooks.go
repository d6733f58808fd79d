package app

import (
	"log/slog"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// WebhookConfig shapes webhook delivery.
type WebhookConfig struct {
	// Attempts bounds the tries per delivery.
	Attempts int
	// FirstRetry is the wait before a second try; each later wait doubles.
	FirstRetry time.Duration
	// DenyPrivate refuses loopback, private and special-purpose
	// destinations and the host's own addresses too.
	DenyPrivate bool
	// LoopbackOnly delivers only to receivers on this machine.
	LoopbackOnly bool
	// Secret is the server secret that webhook secrets and Webhook-Ids are
	// derived with; random for each sandbox if empty.
	Secret string
}

// startWebhooks starts the one dispatcher every account's outbox shares,
// and returns how an account gets its outbox and its identity.
func startWebhooks(cfg WebhookConfig, logger *slog.Logger) (newOutbox func(string, sandbox.Clock, accounts.Budget) accounts.Outbox, identity func(string, int) string, stop func()) {
	d := webhook.Start(webhook.Options{
		Logger: logger, MaxAttempts: cfg.Attempts, FirstRetry: cfg.FirstRetry,
		DenyPrivate: cfg.DenyPrivate, LoopbackOnly: cfg.LoopbackOnly,
	})
	newOutbox = func(id string, clock sandbox.Clock, budget accounts.Budget) accounts.Outbox {
		return d.NewOutbox(id, clock, budget)
	}
	return newOutbox, webhook.NewKeys(cfg.Secret).Identity, d.Close
}
