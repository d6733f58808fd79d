package conformance_test

// plannedFaultProofs break one rule each of planned faults and the journal (FAULT, JRNL), beyond faultProofs.
func plannedFaultProofs() []proof {
	return nil
}
