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
