// Package childenv decides the environment every program mm starts
// receives — commands, hooks, MCP servers, language servers — and keeps
// secrets out of it: variables whose name says secret, the model server's
// key under any name, and the secrets learned while mm runs, which are
// also masked in what a command prints and in the log.
package childenv
