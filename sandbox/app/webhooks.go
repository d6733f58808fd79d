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
	// DenyPrivate refuses loopback and private destinations too.
	DenyPrivate bool
	// LoopbackOnly delivers only to receivers on this machine.
	LoopbackOnly bool
}

// startWebhooks starts the one dispatcher every account's outbox shares.
func startWebhooks(cfg WebhookConfig, logger *slog.Logger) (func(string, sandbox.Clock) accounts.Outbox, func()) {
	d := webhook.Start(webhook.Options{
		Logger: logger, MaxAttempts: cfg.Attempts, FirstRetry: cfg.FirstRetry,
		DenyPrivate: cfg.DenyPrivate, LoopbackOnly: cfg.LoopbackOnly,
	})
	return func(id string, clock sandbox.Clock) accounts.Outbox { return d.NewOutbox(id, clock) }, d.Close
}
