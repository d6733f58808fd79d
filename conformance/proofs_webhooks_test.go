package conformance_test

// webhookProofs break one rule each of webhooks, events and deliveries (WH, EVT, DLV).
func webhookProofs() []proof {
	return nil
}
