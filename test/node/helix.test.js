'use strict';
// A client that behaves as Helix does (editors/helix/README.md): it names itself helix
// in clientInfo, as Helix does, and declares no
// experimental.agentls capability and no window.showMessage (and answers
// window/showMessageRequest with MethodNotFound should it come), so a confirmation is a
// diagnostic whose code actions answer it; it applies edits to its buffers and never
// saves them. A prompt run the way `:lsp-workspace-command agentls.prompt {...}` runs it
// edits a Go file, approved through the code action, and the agent's `go test` then
// sees the edit (docs/protocol.md, "Edits on disk before the next command").

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { withClient, startFakeGemini, makeWorkspace, rpc } = require('./lib/client');

const T = { timeout: 120000 };

/** The client capabilities Helix 25.07 sends, as far as agentls reads them. */
function helixCapabilities() {
  return {
    general: { positionEncodings: ['utf-8', 'utf-32', 'utf-16'] },
    workspace: {
      configuration: true,
      applyEdit: true,
      executeCommand: { dynamicRegistration: false },
      workspaceFolders: true,
      didChangeConfiguration: { dynamicRegistration: false },
      workspaceEdit: {
        documentChanges: true,
        resourceOperations: ['create', 'rename', 'delete'],
        failureHandling: 'abort',
        normalizesLineEndings: false,
      },
    },
    textDocument: {
      synchronization: { dynamicRegistration: false, didSave: true },
      publishDiagnostics: { versionSupport: true, tagSupport: { valueSet: [1, 2] } },
      codeAction: {
        codeActionLiteralSupport: {
          codeActionKind: {
            valueSet: ['', 'quickfix', 'refactor', 'refactor.extract', 'refactor.inline', 'refactor.rewrite', 'source', 'source.organizeImports'],
          },
        },
        isPreferredSupport: true,
        disabledSupport: true,
        dataSupport: true,
        resolveSupport: { properties: ['edit', 'command'] },
      },
    },
    window: { workDoneProgress: true },
  };
}

// A pending confirmation: a Warning diagnostic of source agentls.
const isQuestion = (d) => d.source === 'agentls' && d.severity === 2;

/** The latest not yet answered confirmation diagnostic published, if any. */
function pendingQuestion(c, answered) {
  for (const m of c.messages('textDocument/publishDiagnostics').reverse()) {
    const diag = m.params.diagnostics.find((d) => isQuestion(d) && !answered.has(d.data && d.data.confirmation));
    if (diag) return { uri: m.params.uri, diag };
  }
  return null;
}

/**
 * Answers confirmations as a Helix user does: space-a (code actions) on the diagnostic's
 * line, then the "Allow once" action, whose command Helix runs with
 * workspace/executeCommand. Resolves with what was asked, once done is settled.
 */
async function approveUntil(c, done) {
  const answered = new Set();
  const asked = [];
  let finished = false;
  done.then(() => { finished = true; }, () => { finished = true; });
  const deadline = Date.now() + 60000;
  while (!finished) {
    assert.ok(Date.now() < deadline, `the prompt neither asked nor ended within 60 s${c.stderrTail()}`);
    const next = pendingQuestion(c, answered);
    if (!next) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      continue;
    }
    const { uri, diag } = next;
    answered.add(diag.data.confirmation);
    const actions = await c.request('textDocument/codeAction', {
      textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] },
    });
    const once = (actions || []).find((a) => a.command && a.command.command === 'agentls.confirm' &&
      a.command.arguments[0].outcome === 'proceed_once');
    assert.ok(once, `an "Allow once" code action among ${JSON.stringify(actions)}`);
    asked.push({ uri, message: diag.message, title: once.title });
    await c.request('workspace/executeCommand', once.command);
  }
  return asked;
}

test('Helix-like client: a prompt\'s edit approved through the code action is on disk for its go test', T, async () => {
  const root = makeWorkspace({
    'go.mod': 'module example.com/answer\n\ngo 1.21\n',
    'answer.go': 'package answer\n\n// Answer is the answer.\nfunc Answer() int { return 41 }\n',
    'answer_test.go': 'package answer\n\nimport "testing"\n\nfunc TestAnswer(t *testing.T) {\n\tif got := Answer(); got != 42 {\n\t\tt.Fatalf("Answer() = %d, want 42", got)\n\t}\n}\n',
  });
  const file = `${root}/answer.go`;
  const fake = await startFakeGemini({
    turns: [
      { calls: [{ name: 'replace', args: { file_path: file, old_string: 'return 41', new_string: 'return 42' }, id: 'e1' }] },
      { calls: [{ name: 'run_shell_command', args: { command: 'go test ./...', description: 'run the tests' }, id: 's1' }] },
      { text: 'Answer returns 42 now and the test passes.' },
      { text: 'Documented.' },
    ],
  });
  // The agent's `go test` uses this machine's Go and its build cache (the server's
  // HOME is a private one).
  const goEnv = (name) => execFileSync(process.env.GO || 'go', ['env', name], {
    env: { ...process.env, PATH: `${process.env.PATH}:/usr/local/go/bin` },
  }).toString().trim();
  const env = {
    ...fake.env,
    PATH: `${process.env.PATH}:/usr/local/go/bin`,
    GOCACHE: goEnv('GOCACHE'),
    GOMODCACHE: goEnv('GOMODCACHE'),
    GOTOOLCHAIN: 'local',
    GOFLAGS: '-count=1',
  };
  try {
    await withClient({ root, env }, async (c) => {
      c.onShowMessageRequest = () => {
        throw new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, 'Helix: window/showMessageRequest is not supported');
      };
      const init = await c.initialize({ capabilities: helixCapabilities(), clientInfo: { name: 'helix', version: '25.07.1 (a05c151b)' } });
      assert.ok(init.capabilities.executeCommandProvider.commands.includes('agentls.prompt'),
        'agentls.prompt is among the commands :lsp-workspace-command offers');
      const uri = await c.open('answer.go', undefined, 'go');

      // :lsp-workspace-command agentls.prompt {"prompt": "…"}
      const prompt = c.execute('agentls.prompt', { prompt: 'Make Answer return 42 and run the tests.' });
      prompt.catch(() => {});
      const asked = await approveUntil(c, prompt);
      const res = await prompt;
      assert.equal(res.stopReason, 'end_turn', JSON.stringify(res) + c.stderrTail());

      assert.equal(asked.length, 2, `asked for the edit and the command: ${JSON.stringify(asked)}`);
      assert.equal(asked[0].uri, uri, 'the edit is asked on its file');
      assert.match(asked[1].message, /go test/, 'the command is asked with its text');
      assert.equal(c.messages('window/showMessageRequest').length, 0, 'nothing sent that the client did not declare');
      assert.equal(c.messages('agentls/update').length, 0);
      assert.equal(c.messages('agentls/confirm').length, 0);

      // The edit reached the buffer, and the disk: Helix never saved.
      assert.match(c.text('answer.go'), /return 42/);
      assert.match(fs.readFileSync(file, 'utf8'), /return 42/);

      // The go test saw it: the transcript (what a plain client gets instead of
      // updates) records the command's exit code.
      assert.equal(typeof res.transcript, 'string', JSON.stringify(res));
      const transcript = fs.readFileSync(res.transcript, 'utf8');
      const shellLine = transcript.split('\n').find((l) => l.includes('run_shell_command') || l.includes('go test'));
      assert.ok(shellLine && /Exit code 0/.test(shellLine), `the go test passed, transcript:\n${transcript}`);
      assert.doesNotMatch(transcript, /not saved/);

      // The pending diagnostics are gone.
      const last = c.messages('textDocument/publishDiagnostics').filter((m) => m.params.uri === uri).pop();
      assert.ok(!last || !last.params.diagnostics.some(isQuestion), 'no question left on the file');

      // Any Helix: an instruction in a comment, then space-a on its line.
      await c.change('answer.go', c.text('answer.go').replace('// Answer is the answer.', '// agentls: document Answer'));
      const lineRange = { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } };
      const actions = await c.request('textDocument/codeAction', { textDocument: { uri }, range: lineRange, context: { diagnostics: [] } });
      const run = (actions || []).find((a) => a.title === 'Run agentls instruction');
      assert.ok(run && run.command && run.command.command === 'agentls.prompt', `"Run agentls instruction" among ${JSON.stringify(actions)}`);
      assert.equal(run.command.arguments[0].prompt, 'document Answer');
      const second = await c.request('workspace/executeCommand', run.command);
      assert.equal(second.stopReason, 'end_turn', JSON.stringify(second));
      assert.notEqual(second.session, res.session, 'a code action starts a new session');

      // :lsp-workspace-command's picker runs a command with no arguments at all.
      assert.equal(await c.request('workspace/executeCommand', { command: 'agentls.cancel' }), null);
      await c.shutdown();
    });
  } finally {
    await fake.stop();
  }
});
