package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/mm-agent/mm/fileedit/disk"
)

// UserPath is where the user's own config lives, ~/.config/mm/agent.yaml,
// whether the file exists or not.
func UserPath(env Env) (string, error) {
	home, err := env.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".config", "mm", "agent.yaml"), nil
}

// Choice is the model server and model the user picked (mm setup).
type Choice struct {
	Provider string // "" lets mm detect the kind
	BaseURL  string
	Model    string
}

// UserChoice is the choice the user's own config holds now (zero when the
// file is missing or sets none), and the file's path. A file that does
// not parse is an error naming it: the user fixes it, mm never rewrites
// what it cannot read. The environment's overrides (MM_BASE_URL…) are not
// applied: this is what the file says.
func UserChoice(env Env) (Choice, string, error) {
	path, err := UserPath(env)
	if err != nil {
		return Choice{}, "", err
	}
	data, err := disk.Read(context.Background(), "", path, disk.MaxControl)
	if errors.Is(err, fs.ErrNotExist) {
		return Choice{}, path, nil
	}
	if err != nil {
		return Choice{}, path, fmt.Errorf("%w: cannot read %s: %v", ErrInvalid, path, err)
	}
	var c Config
	if err := Parse(data, &c); err != nil {
		return Choice{}, path, fmt.Errorf("%w: %s %v", ErrInvalid, path, err)
	}
	return Choice{Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model}, path, nil
}

// SaveChoice writes ch into the user's own config — provider, baseURL and
// model; every other key and comment of the file is kept — atomically,
// and returns the file's path. It never writes a workspace's
// .mm/agent.yaml: a model server is the user's to choose, and a
// repository may not set it until trusted.
func SaveChoice(env Env, ch Choice) (string, error) {
	path, err := UserPath(env)
	if err != nil {
		return "", fmt.Errorf("no home directory for your config: %w", err)
	}
	data, err := disk.Read(context.Background(), "", path, disk.MaxControl)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return path, fmt.Errorf("read %s: %w", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return path, fmt.Errorf("%s does not parse (fix it, then run mm setup again): %v", path, err)
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return path, fmt.Errorf("%s is not a mapping of keys (fix it, then run mm setup again)", path)
	}
	setKey(top, "provider", ch.Provider)
	setKey(top, "baseURL", ch.BaseURL)
	setKey(top, "model", ch.Model)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return path, fmt.Errorf("write %s: %w", path, err)
	}
	enc.Close()
	if err := Parse(out.Bytes(), &Config{}); err != nil { // what mm will read next
		return path, fmt.Errorf("%s: %v", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return path, err
	}
	if err := disk.WriteAtomic("", path, out.Bytes(), 0o644); err != nil {
		return path, fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// setKey sets key to the string value in the mapping m, replacing its
// value where the key is, appending it otherwise; an empty value removes
// the key (mm's default for it).
func setKey(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		if value == "" {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
		m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, LineComment: m.Content[i+1].LineComment}
		return
	}
	if value != "" {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
	}
}
