package httpapi

// claimRoutes are the routes of the post-sale claims area (docs/post-sale.md).
func (s *Server) claimRoutes() []route {
	return nil
}
