package messages_test

import (
	"fmt"
	"testing"

	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/messages"
)

// BenchmarkConversationPage reads the newest page of 10 of a conversation
// of 100 and of 100,000 messages, on Badger and on PostgreSQL: a page reads
// its own messages and the counts kept beside them, so the two cost the
// same (compare their ns/op; round-trips/op on PostgreSQL).
//
//	go test -run '^$' -bench BenchmarkConversationPage -timeout 30m ./messages
func BenchmarkConversationPage(b *testing.B) {
	for _, backend := range teststore.DurableBackends {
		for _, size := range []int{100, 100_000} {
			b.Run(fmt.Sprintf("%s/messages=%d", backend, size), func(b *testing.B) {
				if testing.Short() && size > 1000 {
					b.Skip("-short: builds 100,000 messages")
				}
				st, trips := teststore.OpenDurable(b, backend, 4)
				e := newEnvOn(b, st)
				o := e.paid()
				if err := e.msg.SendMany(ctx, o.PackID, size, 1000, "¿Cuándo llega mi compra?"); err != nil {
					b.Fatal(err)
				}
				q := messages.ConversationQuery{Limit: 10}
				b.ReportAllocs()
				n0, ops := trips.Load(), 0
				for b.Loop() {
					ops++
					c, err := e.msg.Conversation(ctx, e.seller, o.PackID, e.seller, q)
					if err != nil || len(c.Messages) != 10 || c.Paging.Total != int64(size) {
						b.Fatalf("page: %d messages of %d, %v", len(c.Messages), c.Paging.Total, err)
					}
				}
				trips.Report(b, n0, ops)
			})
		}
	}
}
