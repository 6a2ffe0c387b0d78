package httpapi

// messageRoutes are the routes of the post-sale messages area (docs/post-sale.md).
func (s *Server) messageRoutes() []route {
	return nil
}
