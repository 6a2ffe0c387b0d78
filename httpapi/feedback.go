package httpapi

// feedbackRoutes are the routes of the post-sale feedback area (docs/post-sale.md).
func (s *Server) feedbackRoutes() []route {
	return nil
}
