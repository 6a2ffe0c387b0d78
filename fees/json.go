package fees

import (
	"strconv"
	"time"

	"github.com/marketplace/marketplace/internal/jsonenc"
)

// The listing price answer is written by hand, byte for byte what
// encoding/json writes for ListingPrice (HTML characters not escaped): the
// parts that depend only on reference data are encoded once per plan, and a
// lookup appends the sale fee, its fixed part and the stop time between
// them. Tests hold this to encoding/json over random reference data.

// stopTimeLayout is how stop_time is written: milliseconds, UTC.
const stopTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// encode fills t's encoded parts for answers in currency currencyID.
func (t *terms) encode(currencyID string) {
	lt := t.lt
	listing := t.listing.String()
	b := append([]byte(nil), `{"listing_type_id":`...)
	b = jsonenc.AppendString(b, lt.ID)
	b = append(b, `,"listing_type_name":`...)
	b = jsonenc.AppendString(b, lt.Name)
	b = append(b, `,"listing_exposure":`...)
	b = jsonenc.AppendString(b, lt.Exposure)
	b = append(b, `,"requires_picture":`...)
	b = strconv.AppendBool(b, lt.RequiresPicture)
	b = append(b, `,"currency_id":`...)
	b = jsonenc.AppendString(b, currencyID)
	b = append(b, `,"listing_fee_amount":`...)
	b = append(b, listing...)
	b = append(b, `,"listing_fee_details":{"fixed_fee":`...)
	b = append(b, listing...)
	b = append(b, `,"gross_amount":`...)
	b = append(b, listing...)
	b = append(b, `},"sale_fee_amount":`...)
	t.head = b

	b = append([]byte(nil), `,"sale_fee_details":{"percentage_fee":`...)
	b = append(b, t.pct.String()...)
	b = append(b, `,"meli_percentage_fee":`...)
	b = append(b, t.meli.String()...)
	b = append(b, `,"financing_add_on_fee":`...)
	b = append(b, t.fin.String()...)
	b = append(b, `,"fixed_fee":`...)
	t.mid = b

	b = append([]byte(nil), `},"free_relist":`...)
	b = strconv.AppendBool(b, lt.FreeRelist)
	t.tail = append(b, `,"stop_time":"`...)
}

// appendJSON appends the answer object of one listing type of the lookup.
// The stop time needs no escaping: it is digits, '-', ':', '.', 'T' and 'Z'.
func (l *lookup) appendJSON(b []byte, pt *planType, st *stopTimes) []byte {
	t := pt.termsFor(l.category)
	b = append(b, t.head...)
	if t.constant {
		b = append(b, '0')
		b = append(b, t.mid...)
		b = append(b, `0,"gross_amount":0`...)
	} else if sale, withFixed, ok := t.fastSale(l.priceI); ok {
		var buf [32]byte
		s := appendScaled(buf[:0], sale, t.places)
		b = append(b, s...)
		b = append(b, t.mid...)
		if withFixed {
			b = append(b, t.fixedText...)
		} else {
			b = append(b, '0')
		}
		b = append(b, `,"gross_amount":`...)
		b = append(b, s...)
	} else {
		sale, fixed := t.saleFee(l.price)
		s := sale.String()
		b = append(b, s...)
		b = append(b, t.mid...)
		b = append(b, fixed.String()...)
		b = append(b, `,"gross_amount":`...)
		b = append(b, s...)
	}
	b = append(b, t.tail...)
	b = append(b, st.get(t.lt.DurationDays)...)
	return append(b, `"}`...)
}

// stopTimes formats the stop times of one lookup: now plus a number of
// days, in UTC. The listing types of a site share a few durations, so each
// is formatted once.
type stopTimes struct {
	now  time.Time
	n    int
	days [4]int
	text [4][]byte
	buf  [4][32]byte
}

func (st *stopTimes) get(days int) []byte {
	for i := 0; i < st.n; i++ {
		if st.days[i] == days {
			return st.text[i]
		}
	}
	if st.n == len(st.days) {
		return st.now.AddDate(0, 0, days).UTC().AppendFormat(nil, stopTimeLayout)
	}
	i := st.n
	st.n++
	st.days[i] = days
	st.text[i] = st.now.AddDate(0, 0, days).UTC().AppendFormat(st.buf[i][:0], stopTimeLayout)
	return st.text[i]
}
