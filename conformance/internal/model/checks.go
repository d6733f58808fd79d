package model

import (
	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/kit"
)

// checked are the rules of docs/contract.md the model judges; the
// package's tests hold the list to the IDs its checks cite.
var checked = []string{"ACCT-1", "ACCT-2", "ACCT-4", "ACCT-5", "ACCT-6", "ANL-1", "ANL-2", "ANL-3", "ANL-4", "BUG-1", "BUG-3", "BUG-5", "BUG-8", "BUG-9", "BUG-10", "BUG-11", "BUG-12", "BUG-14", "BUG-15", "BUG-16", "BUG-17", "BUG-18", "BUG-19", "BUG-20", "CLK-1", "CLK-2", "CLK-4", "CLK-6", "CLK-7", "CMP-1", "CMP-3", "CMP-5", "CMP-6", "CMP-7", "CMP-9", "CMP-10", "CMP-11", "CMP-12", "CMP-13", "CMP-14", "CTL-3", "CTL-4", "CTL-6", "CTL-7", "DLV-1", "ENV-2", "ENV-10", "ERR-6", "ERR-8", "ERR-9", "ERR-10", "ERR-11", "ERR-12", "ERR-15", "ERR-17", "ERR-18", "ERR-19", "ERR-20", "EVT-1", "EVT-2", "EVT-4", "FAULT-9", "FAULT-13", "FAULT-14", "FAULT-16", "FAULT-17", "FAULT-22", "FAULT-26", "FAULT-30", "FAULT-32", "FAULT-41", "JRNL-1", "JRNL-3", "JRNL-12", "JRNL-13", "JRNL-14", "LIST-1", "LIST-2", "LIST-4", "LIST-5", "LIST-7", "LIST-8", "LIST-9", "LIST-10", "LIST-11", "LIST-13", "RATE-1", "RATE-3", "RATE-5", "RATE-6", "RATE-7", "RATE-10", "RATE-14", "ROUTE-3", "ROUTE-5", "WH-1", "WH-4", "WH-5", "WH-6"}

// Checks declares the rules this package judges, for the kit's catalogue.
func Checks() []kit.Check {
	return coverage.Declare(coverage.ByModel, "the model of the contract, fed every exchange of the run, a user's scenarios included, compares each answer with what the account's history makes it", checked...)
}
