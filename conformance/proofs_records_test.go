package conformance_test

// recordProofs break one rule each of the accounts' records (ACCT, CMP, LIST, BUG, TST, ANL).
func recordProofs() []proof {
	return nil
}
