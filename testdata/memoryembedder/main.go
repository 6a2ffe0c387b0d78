// Command memoryembedder is the smallest program that embeds the engine on
// memory and serves it over HTTP: TestMemoryOnlyEmbedder_LinksNeitherBadgerNorPgx
// lists what it links.
package main

import (
	"context"
	"log"
	"net/http"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage/memory"
)

func main() {
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	go m.Start(context.Background())
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", httpapi.New(m, httpapi.Config{})))
}
