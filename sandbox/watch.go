package sandbox

// A Watcher is told, while a watched command runs, of every path the command is about
// to change, before the change happens: it is how a checkpoint keeps what a file held
// before a command rewrote or removed it, without copying the workspace beforehand.
type Watcher interface {
	// Changing is called before a system call of the command (or of any process it
	// starts) creates, opens for writing, truncates, removes, renames, links or changes
	// the mode of path, an absolute path as the process named it, resolved against its
	// directory but with links not resolved. tree is set for both paths of a rename,
	// which may move a whole directory. The system call waits until Changing returns.
	// Calls may come from several goroutines, one per watched command.
	Changing(path string, tree bool)
}
