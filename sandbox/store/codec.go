package store

import (
	"fmt"

	"github.com/testcampaign/kit/sandbox"
)

// packed is a full block's records in two arrays that hold no pointers:
// their strings one after another in text, and in words, for each record,
// where its strings start, where each ends, and its numbers. The collector
// marks such a block and its two arrays without scanning them. A block of
// record structs costs it 32 structs and their strings, each looked through
// for pointers on every collection, and with a few hundred thousand records
// in an account that marking cost a request more CPU than its handler did.
type packed struct {
	text  string
	words []uint64
}

// packer writes records into a packed block.
type packer struct {
	text  []byte
	words []uint64
}

func (p *packer) str(strs ...string) {
	for _, s := range strs {
		p.text = append(p.text, s...)
		p.words = append(p.words, uint64(len(p.text)))
	}
}

func (p *packer) num(nums ...uint64) { p.words = append(p.words, nums...) }

// unpacker reads one record back. Its strings are slices of the block's
// text, so reading a record copies no bytes and allocates nothing.
type unpacker struct {
	text  string
	words []uint64
	// at is where the next string starts in text.
	at uint64
}

func (u *unpacker) str() string {
	end := u.words[0]
	s := u.text[u.at:end]
	u.at, u.words = end, u.words[1:]
	return s
}

func (u *unpacker) num() uint64 {
	n := u.words[0]
	u.words = u.words[1:]
	return n
}

// codec packs a table's records and reads them back. pack and unpack visit
// the same fields in the same order, and pack writes fields words for every
// record, whatever it holds.
type codec[T any] struct {
	fields int
	pack   func(*packer, *T)
	// unpack takes its unpacker by value: through a pointer, which a func
	// value's call must assume escapes, every read would allocate it.
	unpack func(unpacker) T
}

// textPerRecord is a guess at a record's text, so that packing a block
// seldom grows its scratch text. The block keeps an exact copy: a
// strings.Builder would hand over its bytes without copying, but with all
// the room the guess left over.
const textPerRecord = 96

// packAll packs recs. Each record's words begin with where its strings
// start in text.
func (c *codec[T]) packAll(recs []*T) (packed, error) {
	p := packer{text: make([]byte, 0, len(recs)*textPerRecord), words: make([]uint64, 0, len(recs)*(1+c.fields))}
	for i, rec := range recs {
		p.num(uint64(len(p.text)))
		c.pack(&p, rec)
		if len(p.words) != (i+1)*(1+c.fields) {
			return packed{}, fmt.Errorf("record %d packed into %d words, not %d", i, len(p.words)-i*(1+c.fields)-1, c.fields)
		}
	}
	return packed{text: string(p.text), words: p.words}, nil
}

func (c *codec[T]) unpackAt(b packed, i int) T {
	words := b.words[i*(1+c.fields) : (i+1)*(1+c.fields)]
	return c.unpack(unpacker{text: b.text, words: words[1:], at: words[0]})
}

var campaignCodec = &codec[sandbox.Campaign]{
	fields: 8,
	pack: func(p *packer, c *sandbox.Campaign) {
		p.str(c.ID, c.Name, c.Platform, string(c.RewardPerBug), c.Status)
		p.num(uint64(c.TestersRequired), uint64(c.CreatedAt), c.Seq)
	},
	unpack: func(u unpacker) sandbox.Campaign {
		return sandbox.Campaign{
			ID: u.str(), Name: u.str(), Platform: u.str(), RewardPerBug: sandbox.Decimal(u.str()), Status: u.str(),
			TestersRequired: int(u.num()), CreatedAt: sandbox.Time(u.num()), Seq: u.num(),
		}
	},
}

var bugCodec = &codec[sandbox.Bug]{
	fields: 12,
	pack: func(p *packer, b *sandbox.Bug) {
		p.str(b.ID, b.CampaignID, b.TesterID, b.Title, b.Description, b.Severity, b.Status)
		if b.Resolution != nil {
			p.str(*b.Resolution)
			p.num(1)
		} else {
			p.str("")
			p.num(0)
		}
		p.num(uint64(b.CreatedAt), uint64(b.UpdatedAt), b.Seq)
	},
	unpack: func(u unpacker) sandbox.Bug {
		b := sandbox.Bug{ID: u.str(), CampaignID: u.str(), TesterID: u.str(), Title: u.str(), Description: u.str(), Severity: u.str(), Status: u.str()}
		if resolution := u.str(); u.num() == 1 {
			b.Resolution = &resolution
		}
		b.CreatedAt, b.UpdatedAt, b.Seq = sandbox.Time(u.num()), sandbox.Time(u.num()), u.num()
		return b
	},
}
