package llm

import (
	"context"
	"fmt"
	"strings"
)

// ServerVersion asks the server for its build or version, where it says
// one (mm doctor): llama.cpp /props build_info, Ollama /api/version, vLLM
// /version. LM Studio, Docker Model Runner and OpenAI say none: "" and no
// error. An unknown provider tries llama.cpp's /props.
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	var v struct {
		BuildInfo string `json:"build_info"`
		Version   string `json:"version"`
	}
	var url string
	switch c.opts.Provider {
	case ProviderLlamaCpp, "":
		url = c.root + "/props"
	case ProviderOllama:
		url = c.root + "/api/version"
	case ProviderVLLM:
		url = c.root + "/version"
	default:
		return "", nil
	}
	if err := c.getJSON(ctx, url, &v); err != nil {
		return "", fmt.Errorf("llm: server version: %w", err)
	}
	return strings.TrimSpace(v.BuildInfo + v.Version), nil
}
