package messages_test

import (
	"fmt"
	"testing"

	"github.com/marketplace/marketplace/messages"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
)

// BenchmarkConversationPage reads the newest page of 10 of a conversation
// of 100 and of 100,000 messages, on memory and on Badger: a page reads
// its own messages and the counts kept beside them, so the two cost the
// same (compare their ns/op).
func BenchmarkConversationPage(b *testing.B) {
	for _, backend := range []string{"memory", "badger"} {
		for _, size := range []int{100, 100_000} {
			b.Run(fmt.Sprintf("%s/messages=%d", backend, size), func(b *testing.B) {
				if testing.Short() && size > 1000 {
					b.Skip("-short: builds 100,000 messages")
				}
				var st storage.Store = memory.New()
				if backend == "badger" {
					bs, err := badger.Open(b.TempDir(), badger.Options{})
					if err != nil {
						b.Fatal(err)
					}
					st = bs
				}
				b.Cleanup(func() { _ = st.Close() })
				e := newEnvOn(b, st)
				o := e.paid()
				if err := e.msg.SendMany(ctx, o.PackID, size, 1000, "¿Cuándo llega mi compra?"); err != nil {
					b.Fatal(err)
				}
				q := messages.ConversationQuery{Limit: 10}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					c, err := e.msg.Conversation(ctx, e.seller, o.PackID, e.seller, q)
					if err != nil || len(c.Messages) != 10 || c.Paging.Total != int64(size) {
						b.Fatalf("page: %d messages of %d, %v", len(c.Messages), c.Paging.Total, err)
					}
				}
			})
		}
	}
}
