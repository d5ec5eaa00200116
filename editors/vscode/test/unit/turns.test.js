'use strict';
// Unit tests of src/logic/turns.ts (compiled to out/logic by `npm run compile`): the
// "# " lines of agentls.turnDiff's diff (each file headed by the calls that changed it),
// and the messages and questions of agentls.undoTurn and agentls.redoTurn.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const turns = require(path.join(__dirname, '..', '..', 'out', 'logic', 'turns.js'));

// The shape of the server's diff (session.Host.Diff): a shell command's files, an edit's.
const diff = [
  '# data.bin: changed by run_shell_command: printf x > data.bin',
  '# binary file, or a content not kept: not shown as text',
  '# notes: today.txt: changed by replace; run_shell_command: sed -i s/a/b/ notes: today.txt',
  '--- a/notes: today.txt',
  '+++ b/notes: today.txt',
  '@@ -1 +1 @@',
  '-a',
  '+b',
  '# run.sh: changed by run_shell_command: chmod +x run.sh',
  '# mode 0644 → 0755',
  '# not recorded: `make`: the sandbox did not watch it',
  '# left out: 3 ignored paths (build/out.o)',
  '',
].join('\n');

test('outline: each file from its header to the next, with its notes; the closing lines apart', () => {
  const o = turns.outline(diff);
  assert.deepEqual(
    o.files.map((f) => [f.rel, f.by, f.line, f.end, f.notes]),
    [
      ['data.bin', 'run_shell_command: printf x > data.bin', 0, 1, ['binary file, or a content not kept: not shown as text']],
      // A name with ": " in it: the header's last "changed by" is not the split point, the first is.
      ['notes: today.txt', 'replace; run_shell_command: sed -i s/a/b/ notes: today.txt', 2, 7, []],
      ['run.sh', 'run_shell_command: chmod +x run.sh', 8, 9, ['mode 0644 → 0755']],
    ],
  );
  assert.deepEqual(o.warnings, [10, 11]);
  assert.equal(turns.fileAt(o, 6).rel, 'notes: today.txt', 'a hunk line belongs to its file');
  assert.equal(turns.fileAt(o, 9).rel, 'run.sh', 'a note belongs to its file');
  assert.equal(turns.fileAt(o, 11), undefined, 'the closing lines belong to no file');
  // A content line of a hunk that starts with "#" is " #" or "+#": never a header.
  assert.equal(turns.outline('# a: changed by edit\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+# b: changed by y\n').files.length, 1);
});

test('diffTitle names the prompt, undone, and the commands not recorded', () => {
  assert.equal(turns.diffTitle({ turn: 2 }), 'agentls prompt 2');
  assert.equal(turns.diffTitle({ turn: 2, undone: true, unrecorded: ['`make`: x'] }), 'agentls prompt 2 (undone) · 1 command not recorded');
  assert.equal(turns.diffTitle({ turn: 3, unrecorded: ['a', 'b'] }), 'agentls prompt 3 · 2 commands not recorded');
});

test('turnBackMessage says what was done and what was left out, as a warning then', () => {
  const names = (ps) => ps.map((p) => path.basename(p));
  assert.deepEqual(turns.turnBackMessage({ turn: 1, reverted: ['/w/a'], deleted: [], changed: [] }, false, names), {
    text: 'agentls: undid prompt 1: 1 file reverted, 0 deleted',
    warning: false,
  });
  assert.deepEqual(
    turns.turnBackMessage(
      { turn: 2, reverted: ['/w/a', '/w/b'], deleted: ['/w/c'], changed: ['/w/d'], notRestorable: ['big.bin: over 8 MB'], unrecorded: ['`make`: unwatched'], leftOut: 1 },
      true,
      names,
    ),
    {
      text: 'agentls: redid prompt 2: 2 files brought back, 1 deleted; left as they are (changed since): d; not restorable (left as they are): big.bin: over 8 MB; not recorded, so not taken back: `make`: unwatched; 1 ignored path left out',
      warning: true,
    },
  );
  assert.deepEqual(turns.turnNotes({ turn: 1, leftOut: 4 }), ['4 ignored paths left out']);
});

test('refusedForChanges and changedQuestion: nothing done because files changed, then asked', () => {
  assert.equal(turns.refusedForChanges({ turn: 1, reverted: [], deleted: [], changed: ['/w/a'] }), true);
  assert.equal(turns.refusedForChanges({ turn: 1, reverted: ['/w/b'], deleted: [], changed: ['/w/a'] }), false, 'forced: done in part');
  assert.equal(turns.refusedForChanges({ turn: 1, reverted: ['/w/b'], deleted: [], changed: [] }), false);
  assert.deepEqual(turns.changedQuestion({ turn: 3 }, false, ['a.txt']), {
    message: 'agentls: a.txt changed since prompt 3, so nothing was undone. Undo the other files anyway?',
    force: 'Undo the Others',
  });
  assert.deepEqual(turns.changedQuestion({ turn: 3 }, true, ['a.txt', 'b.txt']), {
    message: 'agentls: a.txt, b.txt changed since the undo of prompt 3, so nothing was redone. Redo the other files anyway?',
    force: 'Redo the Others',
  });
});
