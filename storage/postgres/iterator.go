package postgres

import (
	"bytes"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/marketplace/marketplace/storage"
)

// A range is read a page at a time, each page a query of its own that
// continues after the last key of the one before: a connection runs one
// statement at a time, and callers Get inside their iteration loops. Pages
// grow fourfold, so that a reader that stops after a few keys fetches few,
// and a long walk takes few round trips. A page's read is queued with the
// transaction's other reads (tx.queuedPages) and sent with the next round
// trip: ranges opened together, and the prefetches before them, are read
// in one.
const (
	firstPage = 32
	maxPage   = 2048
)

// The lower bound is inclusive and the upper one exclusive, as in a Range:
// the next page forward starts at the last key plus a zero byte, the
// smallest key after it.
var pageQueries = [2][2]string{
	{ // forward
		"SELECT k, v FROM kv WHERE k >= $1 ORDER BY k LIMIT $2",
		"SELECT k, v FROM kv WHERE k >= $1 AND k < $3 ORDER BY k LIMIT $2",
	},
	{ // reverse
		"SELECT k, v FROM kv WHERE k >= $1 ORDER BY k DESC LIMIT $2",
		"SELECT k, v FROM kv WHERE k >= $1 AND k < $3 ORDER BY k DESC LIMIT $2",
	},
}

type entry struct{ k, v []byte }

var _ storage.Iterator = (*iterator)(nil)

type iterator struct {
	t *tx
	r storage.Range
	// lo and hi bound what is left to read after the page, [lo, hi); a
	// nil hi has no bound.
	lo, hi []byte
	page   []entry
	i      int
	// more says that keys may remain between lo and hi.
	more bool
	size int
	// steps counts moves since the context was last looked at: a page
	// may hold more than storage.IterationCheckEvery keys.
	steps int
	// queued says that the read of the next page waits in the
	// transaction's queue.
	queued bool
}

// Iterate reads r a page at a time. In an Update, the writes made so far
// are sent before each page, so that the page includes them.
func (t *tx) Iterate(r storage.Range) storage.Iterator {
	it := &iterator{t: t, r: r, size: min(max(firstPage, r.Expect), maxPage)}
	it.reset(r.Start, r.End)
	return it
}

// reset makes [lo, hi) what is left to read, within the range, and reads
// its first page.
func (it *iterator) reset(lo, hi []byte) {
	if lo == nil || (it.r.Start != nil && bytes.Compare(lo, it.r.Start) < 0) {
		lo = it.r.Start
	}
	if lo == nil {
		lo = []byte{}
	}
	if hi == nil || (it.r.End != nil && bytes.Compare(hi, it.r.End) > 0) {
		hi = it.r.End
	}
	it.lo, it.hi = lo, hi
	it.more = hi == nil || bytes.Compare(lo, hi) < 0
	it.fetch()
}

// fetch empties the page and queues the read of the next one, which
// goes with the transaction's next round trip: Valid sends it if nothing
// else has by then.
func (it *iterator) fetch() {
	it.page, it.i = it.page[:0], 0
	if !it.more || it.queued {
		return
	}
	it.queued = true
	it.t.queuedPages = append(it.t.queuedPages, it)
}

// pageQuery is the read of the next page, from where the range stands
// when it is sent.
func (it *iterator) pageQuery() query {
	reverse := 0
	if it.r.Reverse {
		reverse = 1
	}
	args := []any{it.lo, it.size}
	sql := pageQueries[reverse][0]
	if it.hi != nil {
		sql = pageQueries[reverse][1]
		args = append(args, it.hi)
	}
	return query{sql: sql, args: args, scan: func(rows pgx.Rows) error {
		for rows.Next() {
			var e entry
			if err := rows.Scan(&e.k, &e.v); err != nil {
				return err
			}
			it.page = append(it.page, e)
		}
		return rows.Err()
	}}
}

// received takes the page that pageQuery read, or ends the range when the
// round trip failed: the transaction has then failed, and the function's
// caller hears of it from View or Update whatever the function returns.
func (it *iterator) received(err error) {
	it.queued = false
	if err != nil {
		it.page, it.more = it.page[:0], false
		return
	}
	if len(it.page) < it.size {
		it.more = false
	} else if last := it.page[len(it.page)-1].k; it.r.Reverse {
		it.hi = last
	} else {
		it.lo = append(bytes.Clone(last), 0)
	}
	it.size = min(4*it.size, maxPage)
}

// load sends the read of the page if it is still queued: whatever is
// asked of an iterator first (Valid, as a rule) waits for its page.
func (it *iterator) load() {
	if it.queued {
		_ = it.t.sendQueued()
	}
}

func (it *iterator) Valid() bool {
	it.load()
	return it.i < len(it.page)
}

func (it *iterator) Key() []byte {
	it.load()
	return it.page[it.i].k
}

func (it *iterator) Value() ([]byte, error) {
	it.load()
	v := it.page[it.i].v
	if v == nil {
		return []byte{}, nil
	}
	return bytes.Clone(v), nil
}

func (it *iterator) Next() {
	it.load()
	if it.i >= len(it.page) {
		return
	}
	it.i++
	if it.steps++; it.steps >= storage.IterationCheckEvery {
		it.steps = 0
		if err := it.t.ctx.Err(); err != nil {
			_ = it.t.fail(err)
			it.page, it.more = it.page[:0], false
			return
		}
	}
	if it.i == len(it.page) {
		it.fetch()
	}
}

func (it *iterator) Seek(key []byte) {
	if it.r.Reverse {
		// The last key <= key is the last one below key plus a zero byte.
		it.reset(nil, append(bytes.Clone(key), 0))
		return
	}
	it.reset(key, nil)
}

func (it *iterator) Close() {
	if it.queued {
		it.t.queuedPages = slices.DeleteFunc(it.t.queuedPages, func(q *iterator) bool { return q == it })
		it.queued = false
	}
	it.page, it.more = nil, false
}
