'use strict';
// Confirmations: agentls/confirm for a client that declares experimental.agentls.confirm,
// window/showMessageRequest for one that does not (docs/protocol.md, "Rich-client methods"
// and "Confirmations without a rich client").

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { withClient, baseCapabilities, richExperimental } = require('./lib/client');

const T = { timeout: 20000 };

const original = 'alpha\nbeta\ngamma\n';
const expected = 'alpha\nBETA\ngamma\n';
const replaceArgs = { file_path: 'doc.txt', old_string: 'beta', new_string: 'BETA' };

function plainCapabilities() {
  const caps = baseCapabilities();
  caps.window.showMessage = { messageActionItem: { additionalPropertiesSupport: false } };
  return caps;
}

test('rich client: an edit asks through agentls/confirm and proceed_once applies it', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize({ experimental: richExperimental });
    const uri = await c.open('doc.txt');
    c.onConfirm = () => {
      // The edit must not reach the editor before the answer.
      assert.equal(c.messages('workspace/applyEdit').length, 0, 'no applyEdit before consent');
      return { outcome: 'proceed_once' };
    };
    const res = await c.runTool('replace', replaceArgs);
    assert.equal(res.status, 'success', JSON.stringify(res) + c.stderrTail());

    const asks = c.messages('agentls/confirm');
    assert.equal(asks.length, 1, 'asked once');
    const d = asks[0].params;
    assert.equal(d.type, 'edit');
    assert.equal(typeof d.id, 'string');
    assert.equal(d.toolCallId, res.toolCallId, 'the confirmation names the tool call');
    assert.equal(typeof d.title, 'string');
    assert.equal(d.uri, uri);
    assert.equal(d.originalContent, original);
    assert.equal(d.newContent, expected);
    assert.match(d.diff, /-beta\n\+BETA/);

    assert.equal(c.text('doc.txt'), expected);
    assert.equal(c.messages('window/showMessageRequest').length, 0, 'a rich client is not asked twice');

    // The rich client also hears about the call through agentls/update.
    const updates = c.messages('agentls/update').map((m) => m.params.update);
    const call = updates.find((u) => u.kind === 'tool_call' && u.toolCallId === res.toolCallId);
    assert.ok(call, `a tool_call update for ${res.toolCallId}, got ${JSON.stringify(updates.map((u) => u.kind))}`);
    assert.equal(call.name, 'replace');
    // update.kind is the update's own discriminator ('tool_call'); the tool's kind is
    // toolKind (docs/protocol.md).
    assert.equal(call.toolKind, 'edit');
    const statuses = updates.filter((u) => u.toolCallId === res.toolCallId && u.status).map((u) => u.status);
    assert.ok(statuses.includes('completed'), `the call ends completed, saw ${statuses.join(' → ')}`);
    await c.shutdown();
  });
});

test('rich client: cancel refuses the edit, nothing changes', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize({ experimental: richExperimental });
    await c.open('doc.txt');
    c.onConfirm = () => ({ outcome: 'cancel' });
    const res = await c.runTool('replace', replaceArgs);
    assert.equal(res.status, 'cancelled', JSON.stringify(res));
    assert.equal(c.messages('agentls/confirm').length, 1);
    assert.equal(c.messages('workspace/applyEdit').length, 0, 'a refused edit is never sent');
    assert.equal(c.text('doc.txt'), original);
    assert.equal(fs.readFileSync(c.file('doc.txt'), 'utf8'), original);
    await c.shutdown();
  });
});

test('rich client: modify_with_editor applies the user\'s version', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize({ experimental: richExperimental });
    await c.open('doc.txt');
    const mine = 'alpha\nBeta (edited by me)\ngamma\n';
    c.onConfirm = () => ({ outcome: 'modify_with_editor', content: mine });
    const res = await c.runTool('replace', replaceArgs);
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.equal(c.text('doc.txt'), mine);
    await c.shutdown();
  });
});

test('rich client: a shell command asks with execute details', T, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize({ experimental: richExperimental });
    c.onConfirm = () => ({ outcome: 'proceed_once' });
    const res = await c.runTool('run_shell_command', { command: 'echo confirmed-run' });
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.match(res.output, /confirmed-run/);
    const d = c.messages('agentls/confirm')[0].params;
    assert.equal(d.type, 'execute');
    assert.equal(d.command, 'echo confirmed-run');
    assert.deepEqual(d.rootCommands, ['echo']);
    assert.equal(typeof d.directory, 'string');

    c.onConfirm = () => ({ outcome: 'cancel' });
    const marker = c.file('must-not-exist');
    const refused = await c.runTool('run_shell_command', { command: `touch ${marker}` });
    assert.equal(refused.status, 'cancelled', JSON.stringify(refused));
    assert.equal(fs.existsSync(marker), false, 'a refused command does not run');
    await c.shutdown();
  });
});

test('rich client: an error answer to agentls/confirm is not approval', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize({ experimental: richExperimental });
    await c.open('doc.txt');
    c.onConfirm = () => { throw new Error('the confirmation window crashed'); };
    const res = await c.runTool('replace', replaceArgs);
    assert.equal(res.status, 'cancelled', JSON.stringify(res));
    assert.equal(c.messages('workspace/applyEdit').length, 0);
    assert.equal(c.text('doc.txt'), original);
    await c.shutdown();
  });
});

// The approving and refusing titles are the server's choice; pick them by meaning.
function approveOnce(actions) {
  const a = actions.find((x) => /once|allow|yes|proceed|accept|approve|run|apply/i.test(x.title) && !/always|no\b|reject|cancel|deny/i.test(x.title));
  assert.ok(a, `an approving action among ${JSON.stringify(actions)}`);
  return a;
}

test('plain client: window/showMessageRequest approves an edit', T, async () => {
  await withClient({ files: { 'doc.txt': original } }, async (c) => {
    await c.initialize({ capabilities: plainCapabilities() });
    await c.open('doc.txt');
    c.onShowMessageRequest = (p) => approveOnce(p.actions);
    const res = await c.runTool('replace', replaceArgs);
    assert.equal(res.status, 'success', JSON.stringify(res) + c.stderrTail());
    const asks = c.messages('window/showMessageRequest');
    assert.equal(asks.length, 1);
    assert.ok(asks[0].params.actions.length >= 2, 'at least approve and reject offered');
    assert.equal(typeof asks[0].params.message, 'string');
    assert.equal(c.messages('agentls/confirm').length, 0, 'no agentls/confirm to a client that did not declare it');
    assert.equal(c.messages('agentls/update').length, 0, 'no agentls/update to a client that did not declare it');
    assert.equal(c.text('doc.txt'), expected);
    await c.shutdown();
  });
});

test('plain client: refusals through window/showMessageRequest', T, async (t) => {
  const answers = {
    'no answer (null)': () => null,
    'a title that was not offered': () => ({ title: 'Sure, whatever' }),
    'an error': () => { throw new Error('no UI'); },
    'the rejecting action': (p) => {
      const a = p.actions.find((x) => /no\b|reject|cancel|deny/i.test(x.title));
      assert.ok(a, `a rejecting action among ${JSON.stringify(p.actions)}`);
      return a;
    },
  };
  for (const [name, answer] of Object.entries(answers)) {
    await t.test(name, async () => {
      await withClient({ files: { 'doc.txt': original } }, async (c) => {
        await c.initialize({ capabilities: plainCapabilities() });
        await c.open('doc.txt');
        c.onShowMessageRequest = answer;
        const res = await c.runTool('replace', replaceArgs);
        assert.equal(c.messages('window/showMessageRequest').length, 1, 'asked');
        assert.equal(res.status, 'cancelled', JSON.stringify(res));
        assert.equal(c.messages('workspace/applyEdit').length, 0);
        assert.equal(c.text('doc.txt'), original);
        assert.equal(fs.readFileSync(c.file('doc.txt'), 'utf8'), original);
        await c.shutdown();
      });
    });
  }
});

test('plain client: a shell command is asked through window/showMessageRequest', T, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize({ capabilities: plainCapabilities() });
    c.onShowMessageRequest = (p) => approveOnce(p.actions);
    const res = await c.runTool('run_shell_command', { command: 'echo via-show-message' });
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.match(res.output, /via-show-message/);
    assert.match(c.messages('window/showMessageRequest')[0].params.message, /echo via-show-message/);
    await c.shutdown();
  });
});

// A client with neither agentls/confirm nor window/showMessage (Helix): the pending
// confirmation is a diagnostic, and its code actions answer it through agentls.confirm.
function confirmActions(actions) {
  return (actions || [])
    .map((a) => (a.command && typeof a.command === 'object' ? { title: a.title, command: a.command } : { title: a.title, command: a }))
    .filter((a) => a.command && a.command.command === 'agentls.confirm');
}

// The pending confirmation is a Warning (docs/protocol.md); an Information diagnostic
// of source agentls marks a pending or running call's location.
const isQuestion = (d) => d.source === 'agentls' && d.severity === 2;

async function pendingDiagnostic(c, uri) {
  const msg = await c.waitFor(
    (m) => m.method === 'textDocument/publishDiagnostics' && m.params.uri === uri && m.params.diagnostics.some(isQuestion),
    'a diagnostic for the pending confirmation');
  return msg.params.diagnostics.find(isQuestion);
}

for (const [label, pick, want] of [
  ['approves', (as) => as.find((a) => a.command.arguments[0].outcome === 'proceed_once'), 'success'],
  ['rejects', (as) => as.find((a) => a.command.arguments[0].outcome === 'cancel'), 'cancelled'],
]) {
  test(`client without prompts: a code action on the pending diagnostic ${label}`, T, async () => {
    await withClient({ files: { 'doc.txt': original } }, async (c) => {
      await c.initialize(); // baseCapabilities: no window.showMessage, no experimental
      const uri = await c.open('doc.txt');
      const pending = c.runTool('replace', replaceArgs);
      pending.catch(() => {});
      const diag = await Promise.race([
        pendingDiagnostic(c, uri),
        pending.then((r) => { throw new Error(`the call ended before any pending diagnostic: ${JSON.stringify(r)}`); }),
      ]);
      const actions = await c.request('textDocument/codeAction', {
        textDocument: { uri },
        range: diag.range,
        context: { diagnostics: [diag] },
      });
      const answers = confirmActions(actions);
      assert.ok(answers.length >= 2, `agentls.confirm code actions offered: ${JSON.stringify(actions)}`);
      const chosen = pick(answers);
      assert.ok(chosen, `the wanted answer among ${JSON.stringify(answers)}`);
      assert.equal(typeof chosen.command.arguments[0].id, 'string');
      await c.request('workspace/executeCommand', chosen.command);
      const res = await pending;
      assert.equal(res.status, want, JSON.stringify(res));
      assert.equal(c.text('doc.txt'), want === 'success' ? expected : original);
      assert.equal(c.messages('window/showMessageRequest').length, 0, 'not asked through a method it did not advertise');
      // The pending diagnostic is cleared when the call ends.
      const pendingMsg = c.received.findIndex((m) => m.method === 'textDocument/publishDiagnostics' && m.params.diagnostics.includes(diag));
      await c.waitFor(
        (m) => m.method === 'textDocument/publishDiagnostics' && m.params.uri === uri && c.received.indexOf(m) > pendingMsg &&
          !m.params.diagnostics.some((d) => d.source === 'agentls'),
        'the pending diagnostic to be cleared', 5000);
      await c.shutdown();
    });
  });
}
