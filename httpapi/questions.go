package httpapi

// questionRoutes registers the routes of questions, answers, blacklists and response time.
func (s *Server) questionRoutes() {}
