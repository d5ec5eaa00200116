'use strict';
// Applying LSP text edits by hand, in any of the three position encodings, the way an
// editor does: every edit's range refers to the original text, edits must not overlap,
// and inserts at the same position keep their order.

/** Offsets (in JS string units) where each line of text starts; LSP line ends are \n, \r\n and \r. */
function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (ch === 10) {
      starts.push(i + 1);
    }
  }
  return starts;
}

/** The string offset of an LSP position counted in encoding units ('utf-8', 'utf-16', 'utf-32'). */
function offsetAt(text, starts, pos, encoding) {
  if (pos.line < 0 || pos.character < 0) throw new Error(`negative position ${JSON.stringify(pos)}`);
  if (pos.line >= starts.length) {
    throw new Error(`position ${JSON.stringify(pos)} is past the last line (${starts.length} lines)`);
  }
  const start = starts[pos.line];
  let end = pos.line + 1 < starts.length ? starts[pos.line + 1] : text.length;
  // The line's own text, without its line break.
  while (end > start && (text.charCodeAt(end - 1) === 10 || text.charCodeAt(end - 1) === 13)) end--;
  if (encoding === 'utf-16') {
    if (start + pos.character > end) {
      throw new Error(`position ${JSON.stringify(pos)} is past the end of line ${pos.line} (${end - start} utf-16 units)`);
    }
    return start + pos.character;
  }
  let units = 0;
  let i = start;
  while (units < pos.character) {
    if (i >= end) throw new Error(`position ${JSON.stringify(pos)} is past the end of line ${pos.line} in ${encoding}`);
    const cp = text.codePointAt(i);
    const w = cp > 0xffff ? 2 : 1;
    if (encoding === 'utf-32') units += 1;
    else if (encoding === 'utf-8') units += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    else throw new Error(`unknown position encoding ${encoding}`);
    i += w;
  }
  if (units !== pos.character) {
    throw new Error(`position ${JSON.stringify(pos)} falls inside a character in ${encoding}`);
  }
  return i;
}

/** Applies LSP TextEdits to text and returns the new text; throws on overlapping or bad ranges. */
function applyEdits(text, edits, encoding = 'utf-16') {
  const starts = lineStarts(text);
  const spans = edits.map((e, index) => {
    const s = offsetAt(text, starts, e.range.start, encoding);
    const t = offsetAt(text, starts, e.range.end, encoding);
    if (t < s) throw new Error(`edit ${index} has its end before its start: ${JSON.stringify(e.range)}`);
    return { s, t, newText: e.newText, index };
  });
  spans.sort((a, b) => a.s - b.s || a.index - b.index);
  let out = '';
  let at = 0;
  for (const sp of spans) {
    if (sp.s < at) throw new Error(`edit ${sp.index} overlaps an earlier edit`);
    out += text.slice(at, sp.s) + sp.newText;
    at = sp.t;
  }
  return out + text.slice(at);
}

/**
 * Turns the edits of one TextEdit[] (all relative to the original text) into didChange
 * content changes applied one after another: last position first, so that every range
 * is still valid when its turn comes; inserts at one position keep their order.
 */
function sequentialChanges(edits) {
  const cmp = (a, b) => a.line - b.line || a.character - b.character;
  return edits
    .map((e, index) => ({ e, index }))
    .sort((x, y) => cmp(y.e.range.start, x.e.range.start) || y.index - x.index)
    .map(({ e }) => ({ range: e.range, text: e.newText }));
}

module.exports = { applyEdits, sequentialChanges, offsetAt, lineStarts };
