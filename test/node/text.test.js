'use strict';
// The hand-written edit applier of lib/text.js, checked against
// vscode-languageserver-textdocument (utf-16) and against hand-counted utf-8 / utf-32
// positions, so a wrong edit from agentls cannot be hidden by a wrong applier.

const test = require('node:test');
const assert = require('node:assert/strict');
const { TextDocument } = require('vscode-languageserver-textdocument');
const { applyEdits, sequentialChanges } = require('./lib/text');

const r = (l1, c1, l2, c2) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('utf-16 edits match vscode-languageserver-textdocument', () => {
  const text = 'alpha\r\nbeta 😀 gamma\ndelta\n';
  const cases = [
    [{ range: r(0, 0, 0, 5), newText: 'ALPHA' }],
    [{ range: r(1, 5, 1, 7), newText: 'smile' }, { range: r(2, 0, 2, 0), newText: '> ' }],
    [{ range: r(0, 5, 1, 0), newText: ' ' }],
    [{ range: r(3, 0, 3, 0), newText: 'epsilon\n' }],
    [{ range: r(1, 0, 1, 0), newText: 'a' }, { range: r(1, 0, 1, 0), newText: 'b' }],
  ];
  for (const edits of cases) {
    const doc = TextDocument.create('file:///x', 'plaintext', 1, text);
    assert.equal(applyEdits(text, edits, 'utf-16'), TextDocument.applyEdits(doc, edits), JSON.stringify(edits));
  }
});

test('utf-8 and utf-32 positions count bytes and code points', () => {
  const text = 'héllo 😀 wörld\n';
  // "héllo " is 7 bytes in utf-8, 6 code points; the emoji is 4 bytes, 1 code point.
  assert.equal(applyEdits(text, [{ range: r(0, 7, 0, 11), newText: ':)' }], 'utf-8'), 'héllo :) wörld\n');
  assert.equal(applyEdits(text, [{ range: r(0, 6, 0, 7), newText: ':)' }], 'utf-32'), 'héllo :) wörld\n');
  assert.equal(applyEdits(text, [{ range: r(0, 6, 0, 8), newText: ':)' }], 'utf-16'), 'héllo :) wörld\n');
  assert.throws(() => applyEdits(text, [{ range: r(0, 2, 0, 2), newText: 'x' }], 'utf-8'), /inside a character/);
});

test('overlapping and out-of-range edits are rejected', () => {
  assert.throws(() => applyEdits('abc\n', [{ range: r(0, 0, 0, 2), newText: '' }, { range: r(0, 1, 0, 3), newText: '' }]), /overlaps/);
  assert.throws(() => applyEdits('abc\n', [{ range: r(0, 0, 0, 9), newText: '' }]), /past the end/);
  assert.throws(() => applyEdits('abc\n', [{ range: r(5, 0, 5, 0), newText: '' }]), /past the last line/);
});

test('sequential didChange changes reproduce the edit (checked with TextDocument.update)', () => {
  const text = 'one\ntwo\nthree\nfour\n';
  const cases = [
    [{ range: r(0, 0, 0, 3), newText: 'ONE' }, { range: r(2, 0, 2, 5), newText: 'THREE\nand a half' }],
    [{ range: r(1, 0, 1, 0), newText: 'a' }, { range: r(1, 0, 1, 0), newText: 'b' }, { range: r(3, 4, 3, 4), newText: '!' }],
    [{ range: r(0, 3, 1, 0), newText: ' ' }, { range: r(1, 3, 2, 0), newText: ' ' }],
  ];
  for (const edits of cases) {
    const doc = TextDocument.create('file:///x', 'plaintext', 1, text);
    TextDocument.update(doc, sequentialChanges(edits), 2);
    assert.equal(doc.getText(), applyEdits(text, edits), JSON.stringify(edits));
  }
});
