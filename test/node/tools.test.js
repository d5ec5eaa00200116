'use strict';
// agentls.listTools, agentls.runTool and the applyEdit round trip (docs/protocol.md,
// "Commands" and "How editor-facing effects map onto standard LSP").

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { withClient, baseCapabilities, richExperimental } = require('./lib/client');
const { applyEdits } = require('./lib/text');

const T = { timeout: 20000 };

// A 40-line file whose line 20 the edits below change.
const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}: some text`);
const original = lines.join('\n') + '\n';
const expected = original.replace('line 20: some text', 'line 20: CHANGED text');
const replaceArgs = { file_path: 'doc.txt', old_string: 'line 20: some text', new_string: 'line 20: CHANGED text' };

function assertToolResult(res, name) {
  assert.equal(typeof res, 'object', 'ToolResult is an object');
  assert.equal(res.name, name);
  assert.equal(typeof res.toolCallId, 'string');
  assert.notEqual(res.toolCallId, '');
  assert.ok(['success', 'error', 'cancelled'].includes(res.status), `status ${res.status}`);
  assert.equal(typeof res.output, 'string');
}

test('agentls.listTools and agentls/tools list the built-in tools as ToolInfo', T, async () => {
  await withClient({}, async (c) => {
    await c.initialize({ experimental: richExperimental });
    const infos = await c.execute('agentls.listTools', {});
    assert.ok(Array.isArray(infos), 'ToolInfo[]');
    const byName = new Map(infos.map((i) => [i.name, i]));
    const kinds = { read_file: 'read', replace: 'edit', write_file: 'edit', run_shell_command: 'execute', grep_search: 'search', glob: 'search', list_directory: 'read' };
    for (const [name, kind] of Object.entries(kinds)) {
      const info = byName.get(name);
      assert.ok(info, `tool ${name} listed (got ${[...byName.keys()].join(', ')})`);
      assert.equal(info.kind, kind, `${name} kind`);
      assert.equal(info.source, 'builtin');
      assert.equal(typeof info.displayName, 'string');
      assert.ok(info.description.length > 20, `${name} has a description`);
      assert.equal(info.parameters.type, 'object', `${name} parameters are a JSON Schema object`);
    }
    assert.deepEqual(byName.get('replace').parameters.required.slice().sort(), ['file_path', 'new_string', 'old_string']);
    assert.ok('file_path' in byName.get('read_file').parameters.properties);

    const rich = await c.request('agentls/tools', {});
    assert.deepEqual(rich.map((i) => i.name).sort(), infos.map((i) => i.name).sort(), 'agentls/tools lists the same tools');
    await c.shutdown();
  });
});

test('agentls.runTool read_file reads a file from disk', T, async () => {
  await withClient({ files: { 'dir/hello.txt': 'hello from disk\nsecond line\n' } }, async (c) => {
    await c.initialize();
    const res = await c.runTool('read_file', { file_path: 'dir/hello.txt' });
    assertToolResult(res, 'read_file');
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.match(res.output, /hello from disk\nsecond line/);
    assert.equal(res.error, undefined);
    await c.shutdown();
  });
});

test('agentls.runTool read_file reads the unsaved editor text of an open document', T, async () => {
  await withClient({ files: { 'a.txt': 'on disk\n' } }, async (c) => {
    await c.initialize();
    await c.open('a.txt');
    await c.change('a.txt', 'unsaved editor text\n');
    const res = await c.runTool('read_file', { file_path: c.file('a.txt') });
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.match(res.output, /unsaved editor text/);
    assert.doesNotMatch(res.output, /on disk/);
    await c.shutdown();
  });
});

test('agentls.runTool reports a failing tool as a ToolResult with an error', T, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize();
    const res = await c.runTool('read_file', { file_path: 'missing.txt' });
    assertToolResult(res, 'read_file');
    assert.equal(res.status, 'error');
    assert.equal(typeof res.error.type, 'string');
    assert.match(res.error.message, /missing\.txt/);
    await c.shutdown();
  });
});

test('replace on an open document goes through workspace/applyEdit as minimal edits', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize();
    assert.equal(await c.execute('agentls.setApprovalMode', { mode: 'yolo' }), null);
    const uri = await c.open('doc.txt');

    const res = await c.runTool('replace', replaceArgs);
    assertToolResult(res, 'replace');
    assert.equal(res.status, 'success', JSON.stringify(res) + c.stderrTail());

    const edits = c.messages('workspace/applyEdit');
    assert.equal(edits.length, 1, 'one applyEdit per tool call (one undo step)');
    const { label, edit } = edits[0].params;
    assert.equal(typeof label, 'string', 'the edit is labelled');
    assert.ok(label.length > 0 && !label.includes('\n'), `one-line label, got ${JSON.stringify(label)}`);
    assert.equal(edit.documentChanges.length, 1);
    const dc = edit.documentChanges[0];
    assert.equal(dc.textDocument.uri, uri);
    assert.equal(dc.textDocument.version, 1, 'edits are against the open version');
    for (const e of dc.edits) {
      assert.ok(e.range.start.line >= 18 && e.range.end.line <= 21, `minimal edit, got range ${JSON.stringify(e.range)}`);
    }
    assert.equal(applyEdits(original, dc.edits), expected);

    assert.equal(c.text('doc.txt'), expected, 'the buffer holds the edit');
    assert.equal(fs.readFileSync(c.file('doc.txt'), 'utf8'), original, 'the editor owns the write: disk unchanged');
    assert.ok(res.diff, 'the result carries the diff');
    assert.equal(res.diff.originalContent, original);
    assert.equal(res.diff.newContent, expected);

    // The next tool reads the edited text.
    const read = await c.runTool('read_file', { file_path: 'doc.txt' });
    assert.match(read.output, /line 20: CHANGED text/);
    await c.shutdown();
  });
});

test('edits use the negotiated position encoding (utf-8)', T, async () => {
  const text = 'héllo 😀 wörld\nsecond\n';
  await withClient({ files: { 'u.txt': text } }, async (c) => {
    const caps = baseCapabilities();
    caps.general.positionEncodings = ['utf-8', 'utf-16'];
    const res0 = await c.initialize({ capabilities: caps });
    assert.equal(res0.capabilities.positionEncoding, 'utf-8');
    await c.execute('agentls.setApprovalMode', { mode: 'yolo' });
    await c.open('u.txt');
    const res = await c.runTool('replace', { file_path: 'u.txt', old_string: 'wörld', new_string: 'world' });
    assert.equal(res.status, 'success', JSON.stringify(res));
    const dc = c.messages('workspace/applyEdit')[0].params.edit.documentChanges[0];
    assert.equal(applyEdits(text, dc.edits, 'utf-8'), 'héllo 😀 world\nsecond\n');
    assert.equal(c.text('u.txt'), 'héllo 😀 world\nsecond\n');
    await c.shutdown();
  });
});

test('applied:false fails the tool call and writes nothing', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize();
    await c.execute('agentls.setApprovalMode', { mode: 'yolo' });
    await c.open('doc.txt');
    c.onApplyEdit = () => ({ applied: false, failureReason: 'the user closed the buffer' });

    const res = await c.runTool('replace', replaceArgs);
    assertToolResult(res, 'replace');
    assert.equal(c.messages('workspace/applyEdit').length, 1, 'the edit was offered');
    assert.equal(res.status, 'error', JSON.stringify(res));
    assert.ok(res.error && res.error.message, 'the failure says why');
    assert.equal(c.text('doc.txt'), original);
    assert.equal(fs.readFileSync(c.file('doc.txt'), 'utf8'), original, 'nothing written to disk');

    // The overlay was not updated either: the model still reads the old text.
    const read = await c.runTool('read_file', { file_path: 'doc.txt' });
    assert.match(read.output, /line 20: some text/);
    await c.shutdown();
  });
});

test('a stale document version is refused by the editor and the tool fails', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize();
    await c.execute('agentls.setApprovalMode', { mode: 'yolo' });
    await c.open('doc.txt');
    // The user types between the proposal and its application: the buffer moves on,
    // and the editor refuses the edit made against the old version.
    c.onApplyEdit = async (params, client) => {
      const doc = client.docs.get(params.edit.documentChanges[0].textDocument.uri);
      doc.version += 1;
      return undefined; // fall through to the normal (version-checking) application
    };
    const res = await c.runTool('replace', replaceArgs);
    assert.equal(res.status, 'error', JSON.stringify(res));
    assert.equal(c.text('doc.txt'), original);
    assert.equal(fs.readFileSync(c.file('doc.txt'), 'utf8'), original);
    await c.shutdown();
  });
});

test('an editor that reports its changes late (like eglot) still gets consecutive edits right', { timeout: 30000 }, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize();
    await c.execute('agentls.setApprovalMode', { mode: 'yolo' });
    await c.open('doc.txt');
    c.deferChanges = true;
    const first = await c.runTool('replace', replaceArgs);
    assert.equal(first.status, 'success', JSON.stringify(first));
    const read = await c.runTool('read_file', { file_path: 'doc.txt' });
    assert.match(read.output, /line 20: CHANGED text/, 'a later tool reads the edit before the editor reported it');
    // A second edit of the same file before the editor has said anything: it must be
    // made against the buffer as it now is (version 2), not the last reported one.
    const second = await c.runTool('replace', { file_path: 'doc.txt', old_string: 'line 30: some text', new_string: 'line 30: ALSO changed' });
    assert.equal(second.status, 'success', `${JSON.stringify(second)}\napplyEdit versions: ${JSON.stringify(c.messages('workspace/applyEdit').map((m) => m.params.edit.documentChanges[0].textDocument.version))}`);
    await c.flushChanges();
    assert.equal(c.text('doc.txt'), expected.replace('line 30: some text', 'line 30: ALSO changed'));
    const reread = await c.runTool('read_file', { file_path: 'doc.txt' });
    assert.match(reread.output, /line 20: CHANGED text[\s\S]*line 30: ALSO changed/);
    await c.shutdown();
  });
});

test('a file not open in the editor is edited through applyEdit too', T, async () => {
  await withClient({ files: { 'closed.txt': original } }, async (c) => {
    await c.initialize();
    await c.execute('agentls.setApprovalMode', { mode: 'yolo' });
    const res = await c.runTool('replace', { ...replaceArgs, file_path: 'closed.txt' });
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.equal(c.messages('workspace/applyEdit').length, 1);
    assert.equal(c.text('closed.txt'), expected, 'the editor holds the edited buffer');
    assert.equal(fs.readFileSync(c.file('closed.txt'), 'utf8'), original, 'the editor, not agentls, writes it');
    await c.shutdown();
  });
});

test('a client that cannot apply edits gets the file written by agentls', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    const caps = baseCapabilities();
    caps.workspace.applyEdit = false;
    delete caps.workspace.workspaceEdit;
    await c.initialize({ capabilities: caps });
    await c.execute('agentls.setApprovalMode', { mode: 'yolo' });
    const res = await c.runTool('replace', replaceArgs);
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.equal(c.messages('workspace/applyEdit').length, 0, 'no applyEdit to a client without it');
    assert.equal(fs.readFileSync(c.file('doc.txt'), 'utf8'), expected);
    await c.shutdown();
  });
});

test('approval mode from initializationOptions (auto_edit) lets an edit through without asking', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    const caps = baseCapabilities();
    caps.window.showMessage = { messageActionItem: { additionalPropertiesSupport: false } };
    await c.initialize({ capabilities: caps, initializationOptions: { approvalMode: 'auto_edit' } });
    await c.open('doc.txt');
    c.onShowMessageRequest = () => null; // were it asked, the answer is "no"
    const res = await c.runTool('replace', replaceArgs);
    assert.equal(c.messages('window/showMessageRequest').length, 0, 'auto_edit does not ask for an edit');
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.equal(c.text('doc.txt'), expected);
    await c.shutdown();
  });
});
