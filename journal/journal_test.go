package journal_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/journal"
)

func ptr[T any](v T) *T { return &v }

func TestJournal_KeepsTheLastSizeEntriesNewestFirst(t *testing.T) {
	is := is.New(t)
	j := journal.New(3)
	for i := range 5 {
		j.Add(journal.Entry{Method: "GET", Path: fmt.Sprintf("/items/%d", i), Status: 200})
	}
	got, total := mustList(t, j, journal.Query{Limit: journal.DefaultSize})
	is.Equal(total, 3) // bounded
	is.Equal(len(got), 3)
	is.Equal(got[0].Path, "/items/4") // newest first
	is.Equal(got[2].Path, "/items/2")
	is.Equal(got[0].ID, int64(5))
}

func TestJournal_SizeZeroKeepsNothing(t *testing.T) {
	is := is.New(t)
	j := journal.New(0)
	is.Equal(j.Add(journal.Entry{Method: "GET"}), int64(0))
	got, total := mustList(t, j, journal.Query{Limit: journal.DefaultSize})
	is.Equal(total, 0)
	is.Equal(len(got), 0)
	is.True(got != nil) // an empty list, not null
}

func TestJournal_FiltersAndPaging(t *testing.T) {
	is := is.New(t)
	j := journal.New(100)
	for i := range 10 {
		e := journal.Entry{Method: "GET", Route: "/users/{user_id}", Status: 200, UserID: ptr(int64(1 + i%2))}
		if i%3 == 0 {
			e.Method, e.Route, e.Status = "POST", "/questions", 400
		}
		j.Add(e)
	}
	_, total := mustList(t, j, journal.Query{Limit: journal.DefaultSize, Method: "post"})
	is.Equal(total, 4) // 0, 3, 6, 9
	_, total = mustList(t, j, journal.Query{Limit: journal.DefaultSize, Route: "/users/{seller_id}"})
	is.Equal(total, 6) // parameter names do not matter
	_, total = mustList(t, j, journal.Query{Limit: journal.DefaultSize, Status: 400})
	is.Equal(total, 4)
	got, total := mustList(t, j, journal.Query{UserID: 2, Offset: 1, Limit: 2})
	is.Equal(total, 5) // odd i
	is.Equal(len(got), 2)
	is.Equal(got[0].ID, int64(8)) // newest first, after skipping id 10
	is.Equal(got[1].ID, int64(6))
}

func TestJournal_ClearKeepsIDsGoing(t *testing.T) {
	is := is.New(t)
	j := journal.New(5)
	j.Add(journal.Entry{})
	j.Clear()
	_, total := mustList(t, j, journal.Query{Limit: journal.DefaultSize})
	is.Equal(total, 0)
	is.Equal(j.Add(journal.Entry{}), int64(2))
}

func TestRedactQuery_RemovesEveryTokenAndSecret(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"limit=5&offset=10", "limit=5&offset=10"},
		{"access_token=APP_USR-abc&limit=5", "access_token=REDACTED&limit=5"},
		{"client_id=1&client_secret=s3cr3t&code=TG-x&code_verifier=v&refresh_token=TG-y&redirect_uri=https%3A%2F%2Fa",
			"client_id=1&client_secret=REDACTED&code=REDACTED&code_verifier=REDACTED&refresh_token=REDACTED&redirect_uri=https%3A%2F%2Fa"},
		{"q=APP_USR-123", "q=REDACTED"},                 // a token under any name
		{"Access%5FToken=x", "Access%5FToken=REDACTED"}, // escaped names
		{"my_password=x&flag", "my_password=REDACTED&flag"},
	} {
		if got := journal.RedactQuery(tc.in); got != tc.want {
			t.Errorf("RedactQuery(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(journal.RedactQuery(tc.in), "APP_USR") {
			t.Errorf("a token survived in %q", tc.in)
		}
	}
}

func mustList(t *testing.T, j *journal.Journal, q journal.Query) ([]journal.Entry, int) {
	t.Helper()
	got, total, err := j.List(q)
	if err != nil {
		t.Fatal(err)
	}
	return got, total
}

// TestList_WindowFollowsThePagingRule: a limit of 0 lists nothing but
// counts everything, and a window outside the rule is refused.
func TestList_WindowFollowsThePagingRule(t *testing.T) {
	j := journal.New(10)
	for range 3 {
		j.Add(journal.Entry{Method: "GET", Path: "/health"})
	}
	got, total := mustList(t, j, journal.Query{Limit: 0})
	if len(got) != 0 || total != 3 {
		t.Fatalf("limit 0: %d entries of %d; want none of 3", len(got), total)
	}
	if _, _, err := j.List(journal.Query{Limit: -1}); err == nil {
		t.Fatal("limit -1 was accepted")
	}
	if _, _, err := j.List(journal.Query{Limit: 1001}); err == nil {
		t.Fatal("limit 1001 was accepted")
	}
}

func TestJournal_ConcurrentAddsAndReadsSeeWholeEntriesWithUniqueIDs(t *testing.T) {
	is := is.New(t)
	const size, writers, each = 64, 4, 500
	j := journal.New(size)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			got, _ := mustList(t, j, journal.Query{Limit: size})
			for _, e := range got {
				// Every field of an entry is of the same Add.
				if e.Path != fmt.Sprintf("/users/%d", *e.UserID) {
					t.Errorf("entry %d: path %s, user %d", e.ID, e.Path, *e.UserID)
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				user := int64(w*each + i + 1)
				j.Add(journal.Entry{Method: "GET", Path: fmt.Sprintf("/users/%d", user), Status: 200, UserID: &user})
			}
		}()
	}
	wg.Wait()
	<-done
	got, total := mustList(t, j, journal.Query{Limit: size})
	is.Equal(total, size) // the last size entries
	seen := map[int64]bool{}
	for i, e := range got {
		is.True(!seen[e.ID]) // ids are unique
		seen[e.ID] = true
		is.Equal(e.ID, int64(writers*each-i)) // newest first, none missing
	}
}
