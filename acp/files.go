package acp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/fileedit/disk"
	"github.com/mm-agent/mm/tools"
)

// editorFiles is the session's view of files when the editor offers
// fs/read_text_file or fs/write_text_file: reads see unsaved buffers,
// writes land in the editor, which builds its review of the agent's
// changes from them. A method the client did not advertise is never
// called: that side goes to the disk view instead.
type editorFiles struct {
	disk        tools.Files
	s           *session
	read, write bool
}

// ReadFile asks the editor for the buffer. A file the editor cannot give
// is read from the disk when it is there (the editor may refuse binary
// files), and is fs.ErrNotExist when it is on neither. A file on disk
// that mm would not read (a FIFO, a device, one over the size limit) is
// not asked of the editor either: the disk view refuses it, without
// reading it.
func (f *editorFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	conn := f.s.agent.connection()
	if !f.read || conn == nil || refused(path) {
		return f.disk.ReadFile(ctx, path)
	}
	resp, err := conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: f.s.id, Path: path})
	if err == nil {
		return []byte(resp.Content), nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
	}
	f.s.agent.log.Debug("fs/read_text_file failed; reading the disk", "path", path, "err", err)
	return f.disk.ReadFile(ctx, path)
}

// WriteFile hands the new text to the editor. An empty text goes to the
// disk: the protocol requires content, so clients refuse an empty write.
// The editor follows links, so the path is checked once more right
// before: a link out of the workspace, or to a file that runs later, put
// there while the permission prompt was open is refused, not written
// through.
func (f *editorFiles) WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error {
	conn := f.s.agent.connection()
	if !f.write || conn == nil || len(data) == 0 {
		return f.disk.WriteFile(ctx, path, data, mode)
	}
	if err := tools.Inside(f.s.env.Roots(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.s.policy.Landing(path, tools.Real(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: f.s.id, Path: path, Content: string(data)}); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the editor did not write it: %v", err)
	}
	return nil
}

// refused reports whether the file at path is one the disk view would
// refuse to read; a missing one is not (the editor may hold it unsaved).
func refused(path string) bool {
	err := disk.Check("", path, disk.MaxSource)
	return err != nil && !errors.Is(err, fs.ErrNotExist)
}
