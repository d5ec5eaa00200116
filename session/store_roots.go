package session

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// Roots returns the workspace roots the stored session id was started in, as its
// header records them (nil for a session stored without).
func (st *Store) Roots(id string) ([]string, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	f, err := st.openFile(id, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4<<10).ReadBytes('\n')
	if len(line) == 0 {
		return nil, fmt.Errorf("session %s: empty file: %w", id, err)
	}
	var h record
	if err := json.Unmarshal(line, &h); err != nil || h.Type != recSession || h.ID != id {
		return nil, fmt.Errorf("session %s: no session header", id)
	}
	return h.Roots, nil
}
