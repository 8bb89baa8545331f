package resolve

import (
	"os"
	"path/filepath"
	"sync"
)

// RealPaths is filepath.EvalSymlinks for many paths in few directories:
// the real path of each directory is looked up once, and each path then
// costs one Lstat. The zero value is ready; safe for concurrent use.
type RealPaths struct {
	dirs sync.Map // directory → its real path
}

// Known records that dir, an absolute clean path, is its own real path.
func (r *RealPaths) Known(dir string) { r.dirs.Store(dir, dir) }

// Real returns the real path of path, an absolute path, as
// filepath.EvalSymlinks does. info is the file's own Lstat when path is
// not a symbolic link (so it describes the file Real names), nil when it
// is one (or when path is not clean).
//
// A path that is not clean ("/ws/link/../pkg") is looked up whole:
// filepath.Dir cleans it, which would take ".." lexically, where the
// system (and EvalSymlinks) takes it after following link.
func (r *RealPaths) Real(path string) (real string, info os.FileInfo, err error) {
	if path != filepath.Clean(path) {
		real, err = filepath.EvalSymlinks(path)
		return real, nil, err
	}
	info, err = os.Lstat(path)
	if err != nil {
		return "", nil, err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		real, err = filepath.EvalSymlinks(path)
		return real, nil, err
	}
	dir := filepath.Dir(path)
	realDir, ok := r.dirs.Load(dir)
	if !ok {
		d, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return "", nil, err
		}
		realDir, _ = r.dirs.LoadOrStore(dir, d)
	}
	return filepath.Join(realDir.(string), filepath.Base(path)), info, nil
}
