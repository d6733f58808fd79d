package store

import (
	"github.com/hashicorp/go-memdb"
)

// Table names.
const (
	tableAccounts   = "accounts"
	tableSequences  = "sequences"
	tableCampaigns  = "campaigns"
	tableBugs       = "bugs"
	tableTesters    = "testers"
	tableWebhooks   = "webhooks"
	tableEvents     = "events"
	tableDeliveries = "deliveries"
)

// Index names. Every record table has indexID (account, id) for lookups and
// indexSeq (account, seq) for newest-first lists; filter indexes end in seq
// too, so a filtered list is one ordered range of its index.
const (
	indexID       = "id"
	indexSeq      = "seq"
	indexStatus   = "status"
	indexPlatform = "platform"
	indexCampaign = "campaign"
	indexTester   = "tester"
	indexSeverity = "severity"
)

func schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		tableAccounts:   accountsTable(),
		tableSequences:  sequencesTable(),
		tableCampaigns:  campaignsTable(),
		tableBugs:       bugsTable(),
		tableTesters:    testersTable(),
		tableWebhooks:   webhooksTable(),
		tableEvents:     eventsTable(),
		tableDeliveries: deliveriesTable(),
	}}
}

func accountsTable() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: tableAccounts,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		},
	}
}

// sequencesTable holds one counter per account and record kind; IDs come from
// it, so they depend only on the order of requests within an account.
func sequencesTable() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: tableSequences,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: compound(str("AccountID"), str("Kind"))},
		},
	}
}

func campaignsTable() *memdb.TableSchema {
	return recordTable(tableCampaigns, "Status", "Platform")
}

func bugsTable() *memdb.TableSchema {
	return recordTable(tableBugs, "Status", "Severity", "CampaignID", "TesterID")
}

// testersTable has no platform index: a tester has several platforms, and a
// reverse walk of a multi-value index cannot tell which of a tester's keys it
// is on, so it cannot stop at the end of one platform's range. Testers are
// few, and filtered while walking the seq index.
func testersTable() *memdb.TableSchema {
	return recordTable(tableTesters)
}

func webhooksTable() *memdb.TableSchema {
	return recordTable(tableWebhooks)
}

func eventsTable() *memdb.TableSchema {
	return recordTable(tableEvents)
}

func deliveriesTable() *memdb.TableSchema {
	return recordTable(tableDeliveries)
}

// filterIndexNames maps a record field to the name of its filter index.
var filterIndexNames = map[string]string{
	"Status":     indexStatus,
	"Platform":   indexPlatform,
	"Severity":   indexSeverity,
	"CampaignID": indexCampaign,
	"TesterID":   indexTester,
}

// recordTable is the schema of a table of account-owned records with a
// (account, field, seq) index for each filter field.
func recordTable(name string, filterFields ...string) *memdb.TableSchema {
	table := &memdb.TableSchema{
		Name: name,
		Indexes: map[string]*memdb.IndexSchema{
			indexID:  {Name: indexID, Unique: true, Indexer: compound(str("AccountID"), str("ID"))},
			indexSeq: {Name: indexSeq, Unique: true, Indexer: compound(str("AccountID"), &memdb.UintFieldIndex{Field: "Seq"})},
		},
	}
	for _, field := range filterFields {
		index := filterIndexNames[field]
		table.Indexes[index] = &memdb.IndexSchema{
			Name:    index,
			Indexer: compound(str("AccountID"), str(field), &memdb.UintFieldIndex{Field: "Seq"}),
		}
	}
	return table
}

func compound(indexes ...memdb.Indexer) *memdb.CompoundIndex {
	return &memdb.CompoundIndex{Indexes: indexes}
}

func str(field string) *memdb.StringFieldIndex {
	return &memdb.StringFieldIndex{Field: field}
}
