package lspbridge

import (
	"fmt"
	"strings"

	"go.lsp.dev/protocol"
)

// Severity of a diagnostic, as LSP numbers it.
type Severity int

// Severities; a diagnostic without one counts as an error.
const (
	SeverityError   Severity = 1
	SeverityWarning Severity = 2
	SeverityInfo    Severity = 3
	SeverityHint    Severity = 4
)

func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return fmt.Sprintf("severity %d", int(s))
}

// Diagnostic is a problem a server reported.
type Diagnostic struct {
	Path string
	// Line and Column are 1-based; Column counts UTF-16 units, as LSP does.
	Line, Column int
	Severity     Severity
	Code         string
	Source       string
	Message      string
}

// problem reports whether d is an error or a warning: information and
// hints are neither listed nor counted.
func (d Diagnostic) problem() bool {
	return d.Severity == SeverityError || d.Severity == SeverityWarning
}

// key is d's identity without its position.
type diagKey struct {
	path, code, source, message string
	severity                    Severity
}

func (d Diagnostic) key() diagKey {
	return diagKey{path: d.Path, code: d.Code, source: d.Source, message: d.Message, severity: d.Severity}
}

func fromProtocol(path string, d protocol.Diagnostic) Diagnostic {
	sev := Severity(d.Severity)
	if sev == 0 {
		sev = SeverityError
	}
	code := ""
	if d.Code != nil {
		code = fmt.Sprint(d.Code)
	}
	return Diagnostic{
		Path:     path,
		Line:     int(d.Range.Start.Line) + 1,
		Column:   int(d.Range.Start.Character) + 1,
		Severity: sev,
		Code:     code,
		Source:   d.Source,
		Message:  d.Message,
	}
}

// oneLine flattens a multi-line message (gopls's "have …\n\twant …") and
// bounds it.
func oneLine(msg string) string {
	fields := strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	s := strings.Join(fields, "; ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
