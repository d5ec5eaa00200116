'use strict';
// agentls/prompt with a model: agentls talks to a fake Gemini API (internal/fakegemini)
// through GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL (docs/protocol.md, "Prompts" and
// "Updates").

const test = require('node:test');
const assert = require('node:assert/strict');
const { withClient, richExperimental, startFakeGemini, makeWorkspace } = require('./lib/client');

const T = { timeout: 30000 };

test('agentls/prompt runs a turn that reads and edits a file, with agentls/update in order', T, async () => {
  const root = makeWorkspace({ 'notes.txt': 'hello\nworld\n' });
  const file = `${root}/notes.txt`;
  const fake = await startFakeGemini({
    turns: [
      { text: 'Let me read it.', calls: [{ name: 'read_file', args: { file_path: file }, id: 'c1' }] },
      { calls: [{ name: 'replace', args: { file_path: file, old_string: 'hello', new_string: 'hello there' }, id: 'c2' }] },
      { text: 'The greeting is fixed.', chunks: 5, usage: { inputTokens: 900, outputTokens: 30 } },
    ],
  });
  try {
    await withClient({ root, env: fake.env }, async (c) => {
      await c.initialize({ experimental: richExperimental, initializationOptions: { approvalMode: 'auto_edit' } });
      await c.open('notes.txt');
      const res = await c.request('agentls/prompt', { prompt: 'fix the greeting', uri: c.uri('notes.txt') });
      assert.equal(res.stopReason, 'end_turn', JSON.stringify(res));
      assert.equal(res.text, 'The greeting is fixed.');
      assert.equal(typeof res.session, 'string');
      assert.ok(res.usage && res.usage.outputTokens >= 30, `usage ${JSON.stringify(res.usage)}`);
      assert.equal(c.text('notes.txt'), 'hello there\nworld\n', 'the edit reached the editor buffer');

      const ups = c.messages('agentls/update').filter((m) => m.params.session === res.session).map((m) => m.params.update);
      const text = ups.filter((u) => u.kind === 'message_chunk').map((u) => u.text).join('');
      assert.equal(text, 'Let me read it.The greeting is fixed.', 'message chunks concatenate to the answer');
      const seq = ups
        .filter((u) => u.kind !== 'tool_call_update' || ['completed', 'failed', 'cancelled'].includes(u.status))
        .map((u) => (u.kind === 'tool_call' ? `tool_call ${u.name}` : u.kind === 'tool_call_update' ? `${u.toolCallId} ${u.status}` : u.kind));
      const squashed = seq.filter((k, i) => !(k === 'message_chunk' && seq[i - 1] === 'message_chunk'));
      assert.deepEqual(squashed, [
        'session_info',
        'message_chunk',
        'tool_call read_file', `${res.session}/c1 completed`,
        'tool_call replace', `${res.session}/c2 completed`,
        'message_chunk',
        'turn_end',
      ]);
      const end = ups[ups.length - 1];
      assert.equal(end.stopReason, 'end_turn');
      const edit = ups.find((u) => u.kind === 'tool_call_update' && u.toolCallId === `${res.session}/c2` && u.status === 'completed');
      assert.ok(edit.content && edit.content.diff && edit.content.diff.newContent === 'hello there\nworld\n', 'the edit carries its diff');
      await c.shutdown();
    });
  } finally {
    await fake.stop();
  }
});
