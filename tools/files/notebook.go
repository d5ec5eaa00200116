package files

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Jupyter notebooks (.ipynb, nbformat 4): read_file renders them as cells with their
// outputs, and notebook_edit changes one cell. An edit rewrites only the bytes of the
// cell it changes, so that the rest of the file — other cells, their outputs and
// metadata, and the indentation the file was written with — stays byte for byte as it
// was, and a version control diff shows the one cell.

// notebook is a parsed notebook with the place of each cell in its text.
type notebook struct {
	text         string
	major, minor int
	// open and close are the offsets of the '[' and ']' of the cells array.
	open, close int
	cells       []nbCell
	language    string
	kernel      string
}

// nbCell is one cell and where its object is in the notebook's text.
type nbCell struct {
	start, end int
	// fields are the cell's keys in the order the file has them.
	fields []nbField
	Type   string
	ID     string
	// Source is the cell's text; listSource says whether the file stores it as a list of
	// lines (nbformat's way) rather than one string.
	Source     string
	listSource bool
	Count      *int
	Outputs    []nbOutput
}

type nbField struct {
	key   string
	value json.RawMessage
}

// nbOutput is one output of a code cell.
type nbOutput struct {
	OutputType string                     `json:"output_type"`
	Name       string                     `json:"name"`
	Text       json.RawMessage            `json:"text"`
	Data       map[string]json.RawMessage `json:"data"`
	Ename      string                     `json:"ename"`
	Evalue     string                     `json:"evalue"`
	Traceback  []string                   `json:"traceback"`
}

// isNotebook reports whether abs names a Jupyter notebook.
func isNotebook(abs string) bool {
	return strings.EqualFold(filepath.Ext(abs), ".ipynb")
}

// notebookError is a notebook that cannot be used, with why.
type notebookError struct{ msg string }

func (e *notebookError) Error() string { return e.msg }

func badNotebook(format string, args ...any) error {
	return &notebookError{msg: fmt.Sprintf(format, args...)}
}

// parseNotebook parses text, the LF text of an .ipynb file.
func parseNotebook(text string) (*notebook, error) {
	var probe any
	if err := json.Unmarshal([]byte(text), &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := strings.Count(text[:min(int(se.Offset), len(text))], "\n") + 1
			return nil, badNotebook("it is not valid JSON (line %d: %v)", line, err)
		}
		return nil, badNotebook("it is not valid JSON (%v)", err)
	}
	if _, ok := probe.(map[string]any); !ok {
		return nil, badNotebook("it is not a JSON object")
	}
	nb := &notebook{text: text, open: -1}
	dec := json.NewDecoder(strings.NewReader(text))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, badNotebook("it is not valid JSON (%v)", err)
	}
	var metadata json.RawMessage
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, badNotebook("it is not valid JSON (%v)", err)
		}
		key, _ := kt.(string)
		switch key {
		case "cells":
			if err := nb.parseCells(dec); err != nil {
				return nil, err
			}
		case "nbformat", "nbformat_minor":
			var n int
			if err := dec.Decode(&n); err != nil {
				return nil, badNotebook("%s is not a whole number", key)
			}
			if key == "nbformat" {
				nb.major = n
			} else {
				nb.minor = n
			}
		case "metadata":
			if err := dec.Decode(&metadata); err != nil {
				return nil, badNotebook("it is not valid JSON (%v)", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, badNotebook("it is not valid JSON (%v)", err)
			}
		}
	}
	switch {
	case nb.major == 0:
		return nil, badNotebook("it has no nbformat version, so it is not a Jupyter notebook")
	case nb.major != 4:
		return nil, badNotebook("it is in nbformat %d; only nbformat 4 notebooks can be read as cells and edited (convert it with `jupyter nbconvert --to notebook`)", nb.major)
	case nb.open < 0:
		return nil, badNotebook("it has no \"cells\" array")
	}
	var md struct {
		Kernelspec   struct{ Name string } `json:"kernelspec"`
		LanguageInfo struct{ Name string } `json:"language_info"`
	}
	if len(metadata) > 0 {
		_ = json.Unmarshal(metadata, &md) // only for the heading; a strange one is left out
	}
	nb.kernel, nb.language = md.Kernelspec.Name, md.LanguageInfo.Name
	return nb, nil
}

// parseCells reads the cells array at dec, recording where each cell is.
func (nb *notebook) parseCells(dec *json.Decoder) error {
	t, err := dec.Token()
	if d, ok := t.(json.Delim); err != nil || !ok || d != '[' {
		return badNotebook("its \"cells\" is not an array")
	}
	nb.open = int(dec.InputOffset()) - 1
	nb.cells = nil
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return badNotebook("it is not valid JSON (%v)", err)
		}
		end := int(dec.InputOffset())
		c, err := parseCell(raw, len(nb.cells))
		if err != nil {
			return err
		}
		c.start, c.end = end-len(raw), end
		if nb.text[c.start:c.end] != string(raw) {
			return badNotebook("cell %d could not be located in the file", len(nb.cells))
		}
		nb.cells = append(nb.cells, c)
	}
	if _, err := dec.Token(); err != nil { // ']'
		return badNotebook("it is not valid JSON (%v)", err)
	}
	nb.close = int(dec.InputOffset()) - 1
	return nil
}

// parseCell parses the object of cell i.
func parseCell(raw json.RawMessage, i int) (nbCell, error) {
	var c nbCell
	fields, err := objectFields(raw)
	if err != nil {
		return c, badNotebook("cell %d is not a JSON object", i)
	}
	c.fields = fields
	for _, f := range fields {
		var err error
		switch f.key {
		case "cell_type":
			err = json.Unmarshal(f.value, &c.Type)
		case "id":
			err = json.Unmarshal(f.value, &c.ID)
		case "source":
			c.Source, c.listSource, err = multiline(f.value)
		case "execution_count":
			err = json.Unmarshal(f.value, &c.Count)
		case "outputs":
			err = json.Unmarshal(f.value, &c.Outputs)
		}
		if err != nil {
			return c, badNotebook("cell %d has a malformed %q (%v)", i, f.key, err)
		}
	}
	if c.Type == "" {
		return c, badNotebook("cell %d has no cell_type", i)
	}
	return c, nil
}

// objectFields returns the keys and values of the JSON object raw, in order.
func objectFields(raw json.RawMessage) ([]nbField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	if d, ok := t.(json.Delim); err != nil || !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var fields []nbField
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, nbField{key: kt.(string), value: v})
	}
	return fields, nil
}

// multiline decodes nbformat's multiline string: one string or a list of lines.
func multiline(raw json.RawMessage) (s string, list bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	if raw[0] == '[' {
		var lines []string
		if err := json.Unmarshal(raw, &lines); err != nil {
			return "", true, err
		}
		return strings.Join(lines, ""), true, nil
	}
	err = json.Unmarshal(raw, &s)
	return s, false, err
}

// encodeMultiline encodes s as nbformat does: a list of lines, each but the last
// ending in "\n", or, if list is false, one string.
func encodeMultiline(s string, list bool) json.RawMessage {
	if !list {
		return jsonString(s)
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, l := range lines {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(l))
	}
	b.WriteByte(']')
	return b.Bytes()
}

// jsonString encodes s as JSON without escaping <, > and &, as Python's json does.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// layout is how the notebook's file is indented: prefix is the whitespace before a
// cell's opening brace, unit one level of indentation; both are empty in a compact
// file.
func (nb *notebook) layout() (prefix, unit string) {
	if len(nb.cells) > 0 {
		start := nb.cells[0].start
		ws := nb.text[strings.LastIndexByte(nb.text[:start], '\n')+1 : start]
		if strings.TrimLeft(ws, " \t") != "" || ws == "" || len(ws)%2 != 0 {
			return "", ""
		}
		return ws, ws[:len(ws)/2]
	}
	// No cell to copy: the "cells" key is one level in.
	line := nb.text[strings.LastIndexByte(nb.text[:nb.open], '\n')+1 : nb.open]
	ws := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	if ws == "" || !strings.Contains(nb.text[:nb.open], "\n") {
		return "", ""
	}
	return ws + ws, ws
}

// encodeCell renders fields as the cell object of a file laid out as prefix and unit
// say, the way Python's json.dumps(indent=…) writes it, which is how nbformat writes
// notebooks.
func encodeCell(fields []nbField, prefix, unit string) (string, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(f.key))
		b.WriteByte(':')
		if err := json.Compact(&b, f.value); err != nil {
			return "", fmt.Errorf("cell field %q: %w", f.key, err)
		}
	}
	b.WriteByte('}')
	if unit == "" {
		return b.String(), nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), prefix, unit); err != nil {
		return "", err
	}
	return out.String(), nil
}

// setField sets key to v in fields. A new key goes before the first key that sorts
// after it, which keeps the sorted order nbformat writes.
func setField(fields []nbField, key string, v json.RawMessage) []nbField {
	for i := range fields {
		if fields[i].key == key {
			fields[i].value = v
			return fields
		}
	}
	at := len(fields)
	for i, f := range fields {
		if f.key > key {
			at = i
			break
		}
	}
	return slices.Insert(fields, at, nbField{key: key, value: v})
}

func dropField(fields []nbField, key string) []nbField {
	out := fields[:0:0]
	for _, f := range fields {
		if f.key != key {
			out = append(out, f)
		}
	}
	return out
}

// hasIDs reports whether cells of this notebook carry ids (nbformat 4.5 and later).
func (nb *notebook) hasIDs() bool { return nb.major > 4 || nb.minor >= 5 }

// listSources reports whether the notebook stores sources as lists of lines: as its
// first cell does, else as nbformat does.
func (nb *notebook) listSources() bool {
	for _, c := range nb.cells {
		for _, f := range c.fields {
			if f.key == "source" {
				return c.listSource
			}
		}
	}
	return true
}

// newCellID returns a cell id no cell of nb has, as nbformat makes them.
func (nb *notebook) newCellID() string {
	for {
		var b [4]byte
		_, _ = rand.Read(b[:]) // never fails
		id := hex.EncodeToString(b[:])
		if nb.find(id) < 0 {
			return id
		}
	}
}

// find returns the index of the cell with id, or -1.
func (nb *notebook) find(id string) int {
	for i, c := range nb.cells {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// newCellFields returns the fields of a new cell of type typ holding source, in the
// order nbformat writes them (sorted keys).
func (nb *notebook) newCellFields(typ, source string) []nbField {
	fields := []nbField{{key: "cell_type", value: jsonString(typ)}}
	if typ == "code" {
		fields = append(fields, nbField{key: "execution_count", value: json.RawMessage("null")})
	}
	if nb.hasIDs() {
		fields = append(fields, nbField{key: "id", value: jsonString(nb.newCellID())})
	}
	fields = append(fields, nbField{key: "metadata", value: json.RawMessage("{}")})
	if typ == "code" {
		fields = append(fields, nbField{key: "outputs", value: json.RawMessage("[]")})
	}
	return append(fields, nbField{key: "source", value: encodeMultiline(source, nb.listSources())})
}

// replaced returns the fields of cell c with source and type typ: its id and metadata
// stay; a code cell's outputs and execution count, which belonged to the old source,
// are cleared, as Jupyter clears them when a cell is edited and not yet run.
func (nb *notebook) replaced(c nbCell, typ, source string) []nbField {
	fields := append([]nbField(nil), c.fields...)
	list := c.listSource
	if !hasField(fields, "source") {
		list = nb.listSources()
	}
	fields = setField(fields, "cell_type", jsonString(typ))
	if typ == "code" {
		fields = setField(fields, "execution_count", json.RawMessage("null"))
		fields = setField(fields, "outputs", json.RawMessage("[]"))
	} else {
		fields = dropField(dropField(fields, "execution_count"), "outputs")
	}
	return setField(fields, "source", encodeMultiline(source, list))
}

func hasField(fields []nbField, key string) bool {
	for _, f := range fields {
		if f.key == key {
			return true
		}
	}
	return false
}

// separator is the text between two cells in the file: the comma and the line break
// and indentation that follow it.
func (nb *notebook) separator(prefix, unit string) string {
	if len(nb.cells) >= 2 {
		return nb.text[nb.cells[0].end:nb.cells[1].start]
	}
	if unit == "" {
		return ","
	}
	return ",\n" + prefix
}

// replaceCell returns the notebook's text with cell i replaced by fields.
func (nb *notebook) replaceCell(i int, fields []nbField) (string, error) {
	prefix, unit := nb.layout()
	cell, err := encodeCell(fields, prefix, unit)
	if err != nil {
		return "", err
	}
	c := nb.cells[i]
	return nb.text[:c.start] + cell + nb.text[c.end:], nil
}

// insertCell returns the notebook's text with a cell of fields inserted at index i.
func (nb *notebook) insertCell(i int, fields []nbField) (string, error) {
	prefix, unit := nb.layout()
	cell, err := encodeCell(fields, prefix, unit)
	if err != nil {
		return "", err
	}
	switch n := len(nb.cells); {
	case n == 0:
		inner := cell
		if unit != "" {
			inner = "\n" + prefix + cell + "\n" + prefix[:len(prefix)-len(unit)]
		}
		return nb.text[:nb.open+1] + inner + nb.text[nb.close:], nil
	case i < n:
		at := nb.cells[i].start
		return nb.text[:at] + cell + nb.separator(prefix, unit) + nb.text[at:], nil
	default:
		at := nb.cells[n-1].end
		return nb.text[:at] + nb.separator(prefix, unit) + cell + nb.text[at:], nil
	}
}

// deleteCell returns the notebook's text without cell i.
func (nb *notebook) deleteCell(i int) string {
	switch n := len(nb.cells); {
	case n == 1:
		return nb.text[:nb.open+1] + nb.text[nb.close:]
	case i < n-1:
		return nb.text[:nb.cells[i].start] + nb.text[nb.cells[i+1].start:]
	default:
		return nb.text[:nb.cells[i-1].end] + nb.text[nb.cells[i].end:]
	}
}

// Rendering for read_file.

// maxOutputChars bounds the text of one output a rendering shows.
const maxOutputChars = 10000

// ansi matches the terminal colour codes of tracebacks.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// render writes the notebook as the model reads it: a heading, then each cell with
// its index, id, type and source, and its outputs (text as it is, images and other
// binary data as a one-line summary).
func (nb *notebook) render(w io.Writer, rel string) {
	fmt.Fprintf(w, "Jupyter notebook %s (nbformat %d.%d", rel, nb.major, nb.minor)
	if nb.language != "" {
		fmt.Fprintf(w, ", language %s", nb.language)
	}
	if nb.kernel != "" {
		fmt.Fprintf(w, ", kernel %s", nb.kernel)
	}
	fmt.Fprintf(w, ") with %d %s. Change a cell with notebook_edit, naming it by cell_id or by its 0-based cell_number.\n", len(nb.cells), plural(len(nb.cells), "cell", "cells"))
	for i, c := range nb.cells {
		fmt.Fprintf(w, "\n<cell index=\"%d\"", i)
		if c.ID != "" {
			fmt.Fprintf(w, " id=%q", c.ID)
		}
		fmt.Fprintf(w, " type=%q", c.Type)
		if c.Count != nil {
			fmt.Fprintf(w, " execution_count=\"%d\"", *c.Count)
		}
		fmt.Fprintf(w, ">\n%s", c.Source)
		if c.Source != "" && !strings.HasSuffix(c.Source, "\n") {
			io.WriteString(w, "\n")
		}
		io.WriteString(w, "</cell>\n")
		for j, o := range c.Outputs {
			renderOutput(w, i, j, o)
		}
	}
}

func renderOutput(w io.Writer, cell, j int, o nbOutput) {
	fmt.Fprintf(w, "<output cell=\"%d\" index=\"%d\" type=%q", cell, j, o.OutputType)
	if o.Name != "" {
		fmt.Fprintf(w, " name=%q", o.Name)
	}
	io.WriteString(w, ">\n")
	var text strings.Builder
	switch o.OutputType {
	case "stream":
		s, _, _ := multiline(o.Text)
		text.WriteString(s)
	case "error":
		fmt.Fprintf(&text, "%s: %s\n", o.Ename, o.Evalue)
		for _, l := range o.Traceback {
			text.WriteString(ansi.ReplaceAllString(l, ""))
			text.WriteString("\n")
		}
	default: // execute_result, display_data
		shown := false
		for _, mime := range []string{"text/plain", "text/markdown", "text/latex"} {
			if raw, ok := o.Data[mime]; ok && !shown {
				s, _, _ := multiline(raw)
				text.WriteString(s)
				shown = true
			}
		}
		for _, mime := range slices.Sorted(maps.Keys(o.Data)) {
			if mime == "text/plain" || mime == "text/markdown" || mime == "text/latex" {
				continue
			}
			s, _, _ := multiline(o.Data[mime])
			if text.Len() > 0 && !strings.HasSuffix(text.String(), "\n") {
				text.WriteString("\n")
			}
			kind := "data"
			if strings.HasPrefix(mime, "image/") {
				kind = "image"
			}
			size := len(s)
			if data, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(s, "\n", "")); err == nil {
				size = len(data) // binary data is stored base64-encoded
			}
			fmt.Fprintf(&text, "[%s %s, %s: not shown]\n", mime, kind, formatSize(int64(size)))
		}
	}
	s := text.String()
	if r := []rune(s); len(r) > maxOutputChars {
		s = string(r[:maxOutputChars]) + fmt.Sprintf("\n[output cut: %d of %d characters shown]\n", maxOutputChars, len(r))
	}
	io.WriteString(w, s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		io.WriteString(w, "\n")
	}
	io.WriteString(w, "</output>\n")
}
