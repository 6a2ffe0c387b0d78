package stubs

import "context"

// CreateUnchecked stores a mapping as a server from before the reserved
// paths would have: not judged against them.
func (s *Service) CreateUnchecked(ctx context.Context, data []byte) (*Mapping, error) {
	m, err := parse(data, false)
	if err != nil {
		return nil, err
	}
	return s.create(ctx, m)
}

// Work is the steps the matchers spent on r.
func (r *Request) Work() int64 { return r.work }

// MaxWork is the bound of the steps of one request.
const MaxWork = maxWork

// The bounds of bounds.go, for the tests.
const (
	MaxPatternLength = maxPatternLength
	MaxPathLength    = maxPathLength
	MaxJSONBody      = maxJSONBody
	MaxJSONDepth     = maxJSONDepth
)
