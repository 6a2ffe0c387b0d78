package stubs

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of stubs. Every key starts with "stb", so that a reset removes
// the mappings and a snapshot keeps them with the rest of the state.
//
//	stb/gen           -> the generation (a random string), written by every change
//	stb/map/<id>      -> Mapping (its JSON as given, the id set)
//	stb/left/<id>     -> the answers a stub with "times" has left (decimal)
//
// A server keeps the mappings in memory with the generation it read them
// at; reading the one generation key tells whether they are still the
// store's.

// Sequence orders mappings of equal priority: the newest is tried first.
const Sequence = "stub_mappings"

func genKey() []byte           { return keycodec.New("stb/gen") }
func mapPrefix() []byte        { return keycodec.New("stb/map") }
func mapKey(id string) []byte  { return keycodec.Key(mapPrefix()).Str(id) }
func leftPrefix() []byte       { return keycodec.New("stb/left") }
func leftKey(id string) []byte { return keycodec.Key(leftPrefix()).Str(id) }
