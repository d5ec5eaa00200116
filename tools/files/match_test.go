package files

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestReplace(t *testing.T) {
	cases := []struct {
		name     string
		content  string
		old, new string
		want     Expect
		result   string
		count    int
		flexible bool
		err      error // compared with errors.As by type, then fields
	}{
		{name: "exact single", content: "a\nfoo\nb\n", old: "foo", new: "bar", result: "a\nbar\nb\n", count: 1},
		{name: "exact inside line", content: "x := foo(1)\n", old: "foo(1)", new: "bar(2)", result: "x := bar(2)\n", count: 1},
		{name: "exact several, one expected", content: "foo foo foo", old: "foo", new: "bar", count: 3, err: &CountError{Found: 3, Expected: 1}},
		{name: "exact all", content: "foo foo foo", old: "foo", new: "bar", want: Expect{All: true}, result: "bar bar bar", count: 3},
		{name: "exact count ok", content: "foo foo", old: "foo", new: "bar", want: Expect{Count: 2}, result: "bar bar", count: 2},
		{name: "exact count wrong", content: "foo foo foo", old: "foo", new: "bar", want: Expect{Count: 2}, count: 3, err: &CountError{Found: 3, Expected: 2}},
		{name: "count wins over all", content: "foo foo foo", old: "foo", new: "bar", want: Expect{All: true, Count: 2}, count: 3, err: &CountError{Found: 3, Expected: 2}},
		{name: "more occurrences than offsets kept", content: strings.Repeat("ab ", maxOffsets+10), old: "ab", new: "c", want: Expect{All: true}, result: strings.Repeat("c ", maxOffsets+10), count: maxOffsets + 10},
		{name: "overlapping key occurrences", content: "xaab aaab", old: "aab", new: "Z", want: Expect{All: true}, result: "xZ aZ", count: 2},
		{name: "non-overlapping", content: "aaaa", old: "aa", new: "b", want: Expect{All: true}, result: "bb", count: 2},
		{name: "empty old", content: "abc", old: "", new: "x", err: ErrEmptyOld},
		{name: "not found", content: "abc\n", old: "xyz", new: "q", err: &NotFoundError{}},
		{name: "whitespace-only old not found", content: "a\n\nb\n", old: "   \n", new: "x", err: &NotFoundError{}},
		{
			name:    "flexible reindents",
			content: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			old:     "    if x {\n        return 1\n    }\n",
			new:     "    if x {\n        return 2\n    }\n",
			result:  "func f() {\n\tif x {\n\t\treturn 2\n\t}\n}\n", count: 1, flexible: true,
		},
		{
			name:    "flexible from unindented old",
			content: "class A:\n    def f(self):\n        return 1\n",
			old:     "def f(self):\n    return 1",
			new:     "def f(self):\n    return 2",
			result:  "class A:\n    def f(self):\n        return 2\n", count: 1, flexible: true,
		},
		{
			name:    "flexible ignores trailing whitespace",
			content: "a  \nb\t\nc\n",
			old:     "a\nb",
			new:     "A\nB",
			result:  "A\nB\nc\n", count: 1, flexible: true,
		},
		{
			name:    "flexible keeps lines indented less than old",
			content: "  x\n  y\n",
			old:     "    x\n    y",
			new:     "    x\nz\n    y",
			result:  "  x\nz\n  y\n", count: 1, flexible: true,
		},
		{
			name:    "flexible keeps unchanged context lines as the file has them",
			content: "a  \nb\nc\n",
			old:     "a\nb",
			new:     "a\nB",
			result:  "a  \nB\nc\n", count: 1, flexible: true,
		},
		{
			name:    "flexible maps each indentation level",
			content: "    if a:\n        x = 1\n",
			old:     "if a:\n  x = 1",
			new:     "if a:\n  x = 2\n  y = 3",
			result:  "    if a:\n        x = 2\n        y = 3\n", count: 1, flexible: true,
		},
		{
			name:    "flexible old equal to new changes nothing",
			content: "\tfoo()  \n\tbar()",
			old:     "foo()\nbar()\n",
			new:     "foo()\nbar()\n",
			result:  "\tfoo()  \n\tbar()", count: 1, flexible: true,
		},
		{
			name:    "flexible several",
			content: "\tfoo()\n\tbar()\n\tfoo()\n\tbar()\n",
			old:     "foo()\nbar()\n",
			new:     "baz()\n",
			count:   2, flexible: true, err: &CountError{Found: 2, Expected: 1, Flexible: true},
		},
		{
			name:    "flexible all",
			content: "\tfoo()\n\tbar()\n\tfoo()\n\tbar()\n",
			old:     "foo()\nbar()\n",
			new:     "baz()\n",
			want:    Expect{All: true},
			result:  "\tbaz()\n\tbaz()\n", count: 2, flexible: true,
		},
		{
			name:    "flexible at end without newline",
			content: "a\n  b",
			old:     "b\n",
			new:     "c\n",
			result:  "a\n  c\n", count: 1, flexible: true,
		},
		{
			name:    "flexible leading blank line in old",
			content: "x\n\n\ty\nz\n",
			old:     "\n  y\n",
			new:     "\n  w\n",
			result:  "x\n\n\tw\nz\n", count: 1, flexible: true,
		},
		{
			name:    "whitespace within line hint",
			content: "one\ntwo\nif (a  ==  b) {\n}\n",
			old:     "if (a == b) {\n}",
			new:     "x",
			err:     &NotFoundError{WhitespaceLine: 3},
		},
		{
			name:    "escaped hint",
			content: "a\n\tb \"q\"\n",
			old:     `a\n\tb \"q\"`,
			new:     "x",
			err:     &NotFoundError{Escaped: true},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, n, flexible, err := Replace(c.content, c.old, c.new, c.want)
			if c.err != nil {
				checkReplaceErr(t, err, c.err)
			} else if err != nil {
				t.Fatalf("error %v", err)
			}
			if n != c.count || flexible != c.flexible {
				t.Errorf("count %d flexible %v, want %d %v", n, flexible, c.count, c.flexible)
			}
			if c.err == nil && got != c.result {
				t.Errorf("result\n%q\nwant\n%q", got, c.result)
			}
		})
	}
}

func checkReplaceErr(t *testing.T, err, want error) {
	t.Helper()
	var nf *NotFoundError
	var ce *CountError
	switch w := want.(type) {
	case *NotFoundError:
		if !errors.As(err, &nf) || *nf != *w {
			t.Fatalf("error %#v, want %#v", err, w)
		}
	case *CountError:
		if !errors.As(err, &ce) || *ce != *w {
			t.Fatalf("error %#v, want %#v", err, w)
		}
	default:
		if !errors.Is(err, want) {
			t.Fatalf("error %v, want %v", err, want)
		}
	}
}

// FuzzReplace checks Replace's contract on arbitrary input: it never panics; when old
// occurs exactly, the outcome is that of strings.Count and strings.Replace; replacing a
// string with itself changes nothing; and a whitespace-flexible replacement leaves the
// text before the first and after the last changed line alone.
func FuzzReplace(f *testing.F) {
	f.Add("a\nfoo\nb\n", "foo", "bar", false, 0)
	f.Add("func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n", "if x {\n    return 1\n}", "if y {\n    return 2\n}", false, 0)
	f.Add("aaaa", "aa", "b", true, 0)
	f.Add("x  y\n  x y\n", "x y", "z", false, 2)
	f.Add("a\n\n\nb", "\n\n", "\n", true, 0)
	f.Add("\t\ta\n\t\tb\n", " a\n b\n", "c\n", false, 1)
	f.Add("é\u00a0x\r\n", "x\r\n", "y", false, 0)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool, count int) {
		want := Expect{All: all, Count: count % 4}
		if want.Count < 0 {
			want.Count = -want.Count
		}
		got, n, flexible, err := Replace(content, old, new, want)

		if old != "" && strings.Contains(content, old) {
			exact := strings.Count(content, old)
			if n != exact || flexible {
				t.Fatalf("exact occurrences: count %d flexible %v, want %d false", n, flexible, exact)
			}
			var ce *CountError
			switch {
			case err == nil:
				if w := strings.Replace(content, old, new, -1); got != w {
					t.Fatalf("result %q, want strings.Replace's %q", got, w)
				}
				if want.Count > 0 && n != want.Count || want.Count == 0 && !want.All && n != 1 {
					t.Fatalf("replaced %d occurrences, want %+v", n, want)
				}
			case errors.As(err, &ce):
				if ce.Found != exact {
					t.Fatalf("CountError found %d, want %d", ce.Found, exact)
				}
			default:
				t.Fatalf("unexpected error %v", err)
			}
		}

		if same, _, _, err := Replace(content, old, old, Expect{All: true}); err == nil && same != content {
			t.Fatalf("replacing %q with itself changed %q into %q", old, content, same)
		}

		if err == nil && flexible {
			if n < 1 {
				t.Fatalf("flexible replacement of %d occurrences", n)
			}
			// The text before the first match and after the last is kept byte for byte.
			m := referenceFind(content, old, equalTrimmed)
			if len(m) != n {
				t.Fatalf("reference found %d matches, Replace %d", len(m), n)
			}
			if !strings.HasPrefix(got, content[:m[0][0]]) || !strings.HasSuffix(got, content[m[len(m)-1][1]:]) {
				t.Fatalf("flexible replacement changed text outside its matches: %q -> %q", content, got)
			}
		}

		// The fast search finds exactly the windows the plain definition does.
		if ol, ok := splitOld(old); ok {
			anchor := strings.TrimSpace(ol.lines[ol.first])
			for _, c := range []struct {
				eq  func(a, b string) bool
				key string
			}{
				{equalTrimmed, anchor},
				{equalIgnoringSpace, anchor[:1]},
			} {
				var got [][2]int
				for _, m := range ol.find(content, c.eq, c.key) {
					got = append(got, [2]int{m.start, m.end})
				}
				if want := referenceFind(content, old, c.eq); !slices.Equal(got, want) {
					t.Fatalf("find(%q, %q) = %v, want %v", content, old, got, want)
				}
			}
		}
	})
}

// referenceFind is the plain definition of the line-wise match that oldLines.find
// implements with a faster search: every window of lines, first to last, compared line
// by line, a match skipping the lines it took. It returns the spans matched.
func referenceFind(text, old string, eq func(a, b string) bool) [][2]int {
	ol, ok := splitOld(old)
	if !ok {
		return nil
	}
	var starts, ends []int
	for pos := 0; pos < len(text); {
		starts = append(starts, pos)
		i := strings.IndexByte(text[pos:], '\n')
		if i < 0 {
			ends = append(ends, len(text))
			break
		}
		ends = append(ends, pos+i)
		pos += i + 1
	}
	k := len(ol.lines)
	var out [][2]int
	for i := 0; i+k <= len(starts); {
		match := true
		for j := range k {
			if !eq(text[starts[i+j]:ends[i+j]], ol.lines[j]) {
				match = false
				break
			}
		}
		if !match {
			i++
			continue
		}
		end := ends[i+k-1]
		if ol.newline && end < len(text) {
			end++
		}
		out = append(out, [2]int{starts[i], end})
		i += k
	}
	return out
}
