package greet

// Server serves greetings.
type Server struct{}

// Start starts the server.
func (s *Server) Start() error { return nil }

// Client asks for greetings.
type Client struct{}

// Start connects the client.
func (c *Client) Start() error { return nil }
