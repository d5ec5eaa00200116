package confirm

import "testing"

// TestAnalyzeReshapes checks which lines are said to change the shape of the file
// tree, so that the scheduler runs them apart from the other calls of their batch.
func TestAnalyzeReshapes(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"git checkout -q evil", true},
		{"git switch main", true},
		{"git reset --hard HEAD~1", true},
		{"git stash pop", true},
		{"git clone https://example.com/r.git", true},
		{"git worktree add ../w", true},
		{"git -C sub checkout evil", true},
		{"git mv a b", true},
		{"git rm -r d", true},
		{"ln -s /etc d", true},
		{"mv a b", true},
		{"mkdir -p a/b", true},
		{"rmdir a", true},
		{"rm -r d", true},
		{"rm -rf d", true},
		{"tar -xf x.tar", true},
		{"tar xf x.tar", true},
		{"unzip x.zip", true},
		{"patch -p1 < x.diff", true},
		{"cp -r a b", true},
		{"cp -a a b", true},
		{"rsync -a a/ b/", true},
		{"install -d out", true},
		{"echo hi && git checkout evil", true},
		{"bash -c 'git checkout evil'", true},
		{"find . -name x -exec ln -s /etc {} \\;", true},
		{"$cmd", true},
		// Any tar counts, as for the line's own writes (makesLinks): a listing is
		// only kept apart from its batch.
		{"tar -tf x.tar", true},
		{"python3 -c 'import os; os.symlink(\"/etc\", \"d\")'", true},

		{"git status", false},
		{"git diff HEAD", false},
		{"git log --oneline", false},
		{"echo pwned > d/marker", false},
		{"cat a.txt", false},
		{"rm a.txt", false},
		{"cp a b", false},
		{"go test ./...", false},
		{"cd sub && ls", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			a, err := Analyze(tt.line, "/w", []string{"/w"})
			if err != nil {
				t.Fatal(err)
			}
			if a.Reshapes != tt.want {
				t.Errorf("Reshapes = %v, want %v (%+v)", a.Reshapes, tt.want, a)
			}
		})
	}
}
