package trust

import "io/fs"

// identity is "" on Windows, where mm reads no inode: every file trust
// covers is hashed again at each reading.
func identity(string, fs.FileInfo) string { return "" }
