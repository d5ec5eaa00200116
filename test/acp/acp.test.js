// `agentls acp` under the official TypeScript ACP SDK as an independent client, against
// the fake Gemini API: a full turn, reject always, cancel, session/load and malformed
// input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  acp, agentEnv, agentlsBinary, initialize, makeWorkspace, processRunning, spawnAgent, startAgent, startFakeGemini, until, withTimeout,
} from './lib.js';

const opts = { timeout: 120000 };

function tmpHome() { return fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-acp-home-')); }

function call(id, name, args) { return { id, name, args }; }

function newSession(agent, cwd) {
  return agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
}

function prompt(agent, sessionId, text) {
  return agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

test('initialize: protocol 1, capabilities, the API key method and logout', opts, async (t) => {
  const fake = await startFakeGemini({ turns: [] });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(tmpHome(), fake.env));
  t.after(() => a.close());
  const res = await initialize(a.agent);
  assert.equal(res.protocolVersion, 1);
  assert.equal(res.agentInfo.name, 'agentls');
  assert.equal(res.agentCapabilities.loadSession, true);
  assert.equal(res.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(res.agentCapabilities.mcpCapabilities.http, true);
  assert.equal(res.agentCapabilities.mcpCapabilities.sse, true);
  assert.deepEqual(res.authMethods.map((m) => m.id), ['gemini-api-key']);
  assert.deepEqual(res.agentCapabilities.auth?.logout, {});
});

test('initialize without a key names GEMINI_API_KEY; session/new asks to authenticate', opts, async (t) => {
  const a = startAgent(agentEnv(tmpHome()));
  t.after(() => a.close());
  const res = await initialize(a.agent);
  assert.equal(res.authMethods.length, 1);
  assert.match(res.authMethods[0].description, /GEMINI_API_KEY/);
  await assert.rejects(newSession(a.agent, makeWorkspace()), (err) => err.code === -32000 && /GEMINI_API_KEY/.test(err.message));
});

test('terminal auth: the client runs `agentls login` in a terminal, reconnects, and the model gets the key', opts, async (t) => {
  const fake = await startFakeGemini({ turns: [{ text: 'Logged in.' }] });
  t.after(() => fake.stop());
  const home = tmpHome();
  const env = agentEnv(home, { GOOGLE_GEMINI_BASE_URL: fake.env.GOOGLE_GEMINI_BASE_URL });
  const key = 'AIza-terminal-auth-7373';
  const a = startAgent(env);
  const res = await initialize(a.agent, { auth: { terminal: true } });
  const login = res.authMethods.find((m) => m.type === 'terminal');
  assert.ok(login, `a terminal method among ${JSON.stringify(res.authMethods)}`);
  assert.deepEqual(login.args, ['login']);
  await assert.rejects(newSession(a.agent, makeWorkspace()),
    (err) => err.code === -32000 && err.data?.authMethods?.some((m) => m.id === login.id));
  await a.close();

  // The client runs the agent's binary with the method's args and env (here the key
  // comes on stdin: the test has no terminal); exit status 0 is a login.
  const run = spawn(agentlsBinary(), login.args, { env: { ...env, ...(login.env ?? {}) }, stdio: ['pipe', 'pipe', 'pipe'] });
  run.stdin.end(`${key}\n`);
  let out = '';
  run.stdout.on('data', (d) => { out += d; });
  run.stderr.on('data', (d) => { out += d; });
  const code = await withTimeout(new Promise((resolve) => run.on('exit', resolve)), 30000, 'agentls login');
  assert.equal(code, 0, out);
  assert.doesNotMatch(out, new RegExp(key));

  const b = startAgent(env);
  t.after(() => b.close());
  await initialize(b.agent, { auth: { terminal: true } });
  const { sessionId } = await newSession(b.agent, makeWorkspace());
  assert.equal((await prompt(b.agent, sessionId, 'hi')).stopReason, 'end_turn');
  assert.deepEqual(fake.headers().map((h) => h['X-Goog-Api-Key']?.[0]), [key]);
  assert.doesNotMatch(b.stderr(), new RegExp(key), 'the key is in no log');
});

test('a full turn: read, an edit allowed once, an edit rejected, a shell command streaming, a plan', opts, async (t) => {
  const root = makeWorkspace({ 'a.txt': 'alpha\nbeta\n' });
  const file = path.join(root, 'a.txt');
  const fake = await startFakeGemini({
    turns: [
      { thought: 'read it first', calls: [call('r1', 'read_file', { file_path: file })] },
      { calls: [call('e1', 'replace', { file_path: file, old_string: 'beta', new_string: 'gamma' })] },
      { calls: [call('e2', 'replace', { file_path: file, old_string: 'alpha', new_string: 'omega' })] },
      { calls: [call('s1', 'run_shell_command', { command: 'echo first; echo second' })] },
      { calls: [call('t1', 'write_todos', { todos: [{ description: 'edit a.txt', status: 'completed' }, { description: 'report', status: 'in_progress' }] })] },
      { text: 'Done.', chunks: 2, usage: { inputTokens: 40, outputTokens: 3 } },
    ],
  });
  t.after(() => fake.stop());
  let edits = 0;
  const a = startAgent(agentEnv(tmpHome(), fake.env), (req) => {
    if (req.toolCall.content?.[0]?.type === 'diff') {
      edits++;
      return edits === 1 ? 'allow_once' : 'reject_once';
    }
    return 'allow_once';
  });
  t.after(() => a.close());
  await initialize(a.agent);
  const { sessionId, modes } = await newSession(a.agent, root);
  assert.equal(modes.currentModeId, 'default');
  assert.deepEqual(modes.availableModes.map((m) => m.id), ['default', 'auto_edit', 'yolo', 'plan']);

  const res = await prompt(a.agent, sessionId, 'change beta to gamma');
  assert.equal(res.stopReason, 'end_turn');
  assert.equal(res.usage?.inputTokens, 40, 'the usage of the turn');
  await a.settled(() => a.of('agent_message_chunk').map((u) => u.content.text).join('') === 'Done.', 'the answer');
  assert.equal(fs.readFileSync(file, 'utf8'), 'alpha\ngamma\n', 'the allowed edit is made, the rejected one is not');

  // Both edits' permission requests carry their diffs.
  const diffs = a.permissions.filter((p) => p.toolCall.content?.[0]?.type === 'diff').map((p) => p.toolCall.content[0]);
  assert.deepEqual(diffs, [
    { type: 'diff', path: file, oldText: 'alpha\nbeta\n', newText: 'alpha\ngamma\n' },
    { type: 'diff', path: file, oldText: 'alpha\ngamma\n', newText: 'omega\ngamma\n' },
  ]);
  // The options are the choices every front end offers, with their ids; the "always"
  // ones widest first, so that a client keeping the last of a kind keeps the session's.
  assert.deepEqual(a.permissions[0].options.map((o) => `${o.optionId} ${o.kind}`),
    ['once allow_once', 'always_save allow_always', 'always allow_always', 'reject reject_once', 'reject_always reject_always']);

  assert.equal(a.of('agent_thought_chunk').map((u) => u.content.text).join(''), 'read it first');
  assert.equal(a.of('agent_message_chunk').map((u) => u.content.text).join(''), 'Done.');
  const started = Object.fromEntries(a.of('tool_call').map((u) => [u.toolCallId.split('/')[1], u]));
  assert.equal(started.r1.kind, 'read');
  assert.equal(started.r1.locations[0].path, file);
  assert.deepEqual(started.r1.rawInput, { file_path: file });
  assert.equal(started.e1.kind, 'edit');
  assert.equal(started.s1.kind, 'execute');
  const ends = Object.fromEntries(a.of('tool_call_update').filter((u) => u.status === 'completed' || u.status === 'failed')
    .map((u) => [u.toolCallId.split('/')[1], u]));
  assert.equal(ends.r1.status, 'completed');
  assert.equal(ends.e1.status, 'completed');
  assert.deepEqual(ends.e1.content[0], { type: 'diff', path: file, oldText: 'alpha\nbeta\n', newText: 'alpha\ngamma\n' });
  assert.equal(ends.e2.status, 'failed');
  assert.equal(ends.s1.status, 'completed');
  assert.ok(ends.s1.rawOutput, 'the result is the rawOutput');
  const streamed = a.of('tool_call_update').filter((u) => u.toolCallId.endsWith('/s1') && !u.status && u.content);
  assert.ok(streamed.length >= 1, 'the command output streams');
  assert.match(streamed.at(-1).content[0].content.text, /first\nsecond/);
  const plans = a.of('plan');
  assert.equal(plans.length, 1);
  assert.deepEqual(plans[0].entries.map((e) => [e.content, e.status]), [['edit a.txt', 'completed'], ['report', 'in_progress']]);
  await until(() => fake.turnsServed() === 6, 'the model to have served the 6 turns');
});

test('fs delegation: the tools read the unsaved buffer, edits are written through the client', opts, async (t) => {
  const root = makeWorkspace({ 'a.txt': 'alpha\nbeta\n' });
  const file = path.join(root, 'a.txt');
  const fake = await startFakeGemini({
    turns: [
      { calls: [call('r1', 'read_file', { file_path: file })] },
      { calls: [call('e1', 'replace', { file_path: file, old_string: 'unsaved', new_string: 'saved' })] },
      { text: 'Saved.' },
    ],
  });
  t.after(() => fake.stop());
  const buffers = { [file]: 'alpha\nunsaved\n' };
  const a = startAgent(agentEnv(tmpHome(), fake.env), () => 'allow_once', buffers);
  t.after(() => a.close());
  await initialize(a.agent, { fs: { readTextFile: true, writeTextFile: true } });
  const { sessionId } = await newSession(a.agent, root);
  assert.equal((await prompt(a.agent, sessionId, 'save it')).stopReason, 'end_turn');
  await a.settled(() => a.of('agent_message_chunk').length > 0, 'the answer');
  const read = a.of('tool_call_update').find((u) => u.toolCallId.endsWith('/r1') && u.status === 'completed');
  assert.match(read.rawOutput.output, /unsaved/, 'read_file sees the buffer');
  assert.deepEqual(a.permissions[0].toolCall.content[0], { type: 'diff', path: file, oldText: 'alpha\nunsaved\n', newText: 'alpha\nsaved\n' });
  assert.deepEqual(a.writes.map((w) => [w.path, w.content]), [[file, 'alpha\nsaved\n']]);
  assert.equal(fs.readFileSync(file, 'utf8'), 'alpha\nbeta\n', 'the disk is the editor\'s to write');
});

test('terminal delegation: run_shell_command runs in the client\'s terminal', opts, async (t) => {
  const root = makeWorkspace();
  const fake = await startFakeGemini({
    turns: [{ calls: [call('s1', 'run_shell_command', { command: 'echo via-terminal; exit 4' })] }, { text: 'It exited 4.' }],
  });
  t.after(() => fake.stop());
  const terminals = new Map();
  const a = startAgent(agentEnv(tmpHome(), fake.env), () => 'allow_once', null, terminals);
  t.after(() => a.close());
  await initialize(a.agent, { terminal: true });
  const { sessionId } = await newSession(a.agent, root);
  assert.equal((await prompt(a.agent, sessionId, 'run it')).stopReason, 'end_turn');
  await a.settled(() => a.of('agent_message_chunk').length > 0, 'the answer');
  const term = terminals.get('term-1');
  assert.ok(term, 'a terminal was created');
  // bash -c LINE, through `agentls sandbox --root ROOT --` where the sandbox contains commands.
  assert.deepEqual([term.params.args.slice(-2), term.params.cwd], [['-c', 'echo via-terminal; exit 4'], root]);
  if (term.params.command !== 'bash') assert.deepEqual(term.params.args.slice(0, 5), ['sandbox', '--root', root, '--', 'bash']);
  assert.ok(term.released, 'the terminal was released');
  const embedded = a.of('tool_call_update').filter((u) => u.content?.some((c) => c.type === 'terminal' && c.terminalId === 'term-1'));
  assert.ok(embedded.some((u) => !u.status), 'the terminal is shown while the command runs');
  const end = embedded.find((u) => u.status);
  assert.equal(end?.status, 'completed');
  assert.match(end.rawOutput.output, /via-terminal[\s\S]*Exit Code: 4/);
});

test('a command of 7 s in the client\'s terminal: its output reaches the model, the terminal is released', opts, async (t) => {
  // The bound on terminal/output and terminal/release (5 s) once started at
  // terminal/create, so that a command that ran longer lost its output: the requests
  // were sent and at once withdrawn with $/cancel_request, and the model was told the
  // output was empty.
  const root = makeWorkspace();
  const line = 'echo begun; sleep 7; echo ended-after-7s';
  const fake = await startFakeGemini({
    turns: [{ calls: [call('s1', 'run_shell_command', { command: line })] }, { text: 'It ended.' }],
  });
  t.after(() => fake.stop());
  const terminals = new Map();
  const a = startAgent(agentEnv(tmpHome(), fake.env), () => 'allow_once', null, terminals);
  t.after(() => a.close());
  await initialize(a.agent, { terminal: true });
  const { sessionId } = await newSession(a.agent, root);
  const started = Date.now();
  assert.equal((await prompt(a.agent, sessionId, 'run it')).stopReason, 'end_turn');
  assert.ok(Date.now() - started >= 7000, 'the command ran its 7 s');
  const term = terminals.get('term-1');
  assert.deepEqual(term?.params.args.slice(-2), ['-c', line]);
  await until(() => term.released, 'the terminal to be released');
  const reqs = fake.requests();
  assert.equal(reqs.length, 2, 'the model was called again with the result');
  const results = reqs[1].contents.flatMap((c) => c.parts).filter((p) => p.functionResponse?.name === 'run_shell_command');
  assert.equal(results.length, 1, 'the result of the command went to the model');
  const sent = JSON.stringify(results[0].functionResponse.response);
  assert.match(sent, /begun\\nended-after-7s/, `the model got the output: ${sent}`);
  assert.doesNotMatch(a.stderr(), /context deadline exceeded/);
});

test('reject always holds for the session', opts, async (t) => {
  const root = makeWorkspace({ 'x.txt': 'x', 'y.txt': 'y' });
  const fake = await startFakeGemini({
    turns: [
      { calls: [call('d1', 'run_shell_command', { command: 'rm x.txt' })] },
      { text: 'Not allowed.' },
      { calls: [call('d2', 'run_shell_command', { command: 'rm y.txt' })] },
      { text: 'Still not.' },
    ],
  });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(tmpHome(), fake.env), () => 'reject_always');
  t.after(() => a.close());
  await initialize(a.agent);
  const { sessionId } = await newSession(a.agent, root);
  assert.equal((await prompt(a.agent, sessionId, 'delete x.txt')).stopReason, 'end_turn');
  assert.equal((await prompt(a.agent, sessionId, 'delete y.txt')).stopReason, 'end_turn');
  await a.settled(() => a.of('agent_message_chunk').map((u) => u.content.text).join('') === 'Not allowed.Still not.', 'the answers');
  assert.equal(a.permissions.length, 1, 'asked once: the second rm is rejected without asking');
  assert.ok(fs.existsSync(path.join(root, 'x.txt')) && fs.existsSync(path.join(root, 'y.txt')));
  const failed = a.of('tool_call_update').filter((u) => u.status === 'failed').map((u) => u.toolCallId.split('/')[1]);
  assert.deepEqual(failed, ['d1', 'd2']);
});

test('ask_user through elicitation/create: a form scoped to the call, the answers to the model', opts, async (t) => {
  const root = makeWorkspace();
  const questions = [
    { question: 'Which database?', header: 'DB', type: 'choice', options: [{ label: 'Postgres', description: 'a server' }, { label: 'SQLite', description: 'a file' }] },
    { question: 'Add tests?', header: 'Tests', type: 'yesno' },
  ];
  const fake = await startFakeGemini({ turns: [{ calls: [call('a1', 'ask_user', { questions })] }, { text: 'Noted.' }] });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(tmpHome(), fake.env), () => null, null, null,
    () => ({ action: 'accept', content: { 0: 'SQLite', 1: false, '1-other': 'not yet' } }));
  t.after(() => a.close());
  await initialize(a.agent, { elicitation: { form: {} } });
  const { sessionId } = await newSession(a.agent, root);
  assert.equal((await prompt(a.agent, sessionId, 'ask me')).stopReason, 'end_turn');
  assert.equal(a.permissions.length, 0);
  assert.equal(a.elicitations.length, 1);
  const req = a.elicitations[0];
  assert.equal(req.mode, 'form');
  assert.equal(req.sessionId, sessionId);
  assert.equal(req.toolCallId, `${sessionId}/a1`);
  assert.deepEqual(req.requestedSchema.properties['0'].oneOf.map((o) => o.const), ['Postgres', 'SQLite']);
  assert.equal(req.requestedSchema.properties['1'].type, 'boolean');
  await a.settled(() => a.of('tool_call_update').some((u) => u.toolCallId === `${sessionId}/a1` && u.status === 'completed'), 'ask_user to complete');
  const done = a.of('tool_call_update').find((u) => u.toolCallId === `${sessionId}/a1` && u.status === 'completed');
  const output = JSON.parse(done.rawOutput.output);
  assert.deepEqual(output.answers, { 0: 'SQLite', 1: 'No, not yet' });
});

test('cancel in the middle of a shell command: stopReason cancelled, no process left', opts, async (t) => {
  const root = makeWorkspace();
  const sleep = `sleep ${300 + (process.pid % 100)}.${Date.now() % 1000}7`;
  const fake = await startFakeGemini({ turns: [{ calls: [call('s1', 'run_shell_command', { command: sleep })] }, { text: 'back' }] });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(tmpHome(), fake.env), () => 'allow_once');
  t.after(() => a.close());
  await initialize(a.agent);
  const { sessionId } = await newSession(a.agent, root);
  const running = a.waitFor((n) => n.update.sessionUpdate === 'tool_call_update' && n.update.status === 'in_progress', 'the command to run');
  const answer = prompt(a.agent, sessionId, 'sleep a while');
  await running;
  await until(() => processRunning(sleep), 'the sleep to start');
  await assert.rejects(prompt(a.agent, sessionId, 'and again'), (err) => err.code === -32600 && /already answering/.test(err.message));
  await a.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  assert.equal((await withTimeout(answer, 30000, 'the cancelled prompt')).stopReason, 'cancelled');
  await until(() => !processRunning(sleep), 'the sleep to be gone');
  assert.equal((await prompt(a.agent, sessionId, 'still there?')).stopReason, 'end_turn');
});

test('session/set_mode and session/load replaying a stored session', opts, async (t) => {
  const root = makeWorkspace({ 'a.txt': 'a\n' });
  const fake = await startFakeGemini({
    turns: [{ calls: [call('r1', 'read_file', { file_path: path.join(root, 'a.txt') })] }, { text: 'It says a.' }],
  });
  t.after(() => fake.stop());
  const home = tmpHome();
  const a = startAgent(agentEnv(home, fake.env));
  t.after(() => a.close());
  await initialize(a.agent);
  const { sessionId } = await newSession(a.agent, root);
  await a.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'plan' });
  await a.settled(() => a.of('current_mode_update').length > 0, 'current_mode_update');
  assert.deepEqual(a.of('current_mode_update').map((u) => u.currentModeId), ['plan']);
  assert.equal((await prompt(a.agent, sessionId, 'what does a.txt say?')).stopReason, 'end_turn');
  await a.close();

  const b = startAgent(agentEnv(home, fake.env));
  t.after(() => b.close());
  await initialize(b.agent);
  const list = await b.agent.request(acp.methods.agent.session.list, { cwd: root });
  assert.deepEqual(list.sessions.map((s) => [s.sessionId, s.cwd, s.title]), [[sessionId, root, 'what does a.txt say?']]);
  const loaded = await b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
  assert.equal(loaded.modes.currentModeId, 'default', 'a resumed session starts in the workspace mode');
  await b.settled(() => b.of('agent_message_chunk').length > 0, 'the replay');
  // The session's commands (agentls's own, /undo among them) are announced after the
  // replay, before the answer; they are not part of the conversation.
  assert.ok(b.updates.some((n) => n.update.sessionUpdate === 'available_commands_update' &&
    n.update.availableCommands.some((c) => c.name === 'undo')), 'the commands announced');
  const replay = b.updates.filter((n) => n.update.sessionUpdate !== 'available_commands_update').map((n) => {
    const u = n.update;
    assert.equal(n.sessionId, sessionId);
    switch (u.sessionUpdate) {
      case 'user_message_chunk': return `user ${u.content.text}`;
      case 'agent_message_chunk': return `agent ${u.content.text}`;
      case 'tool_call': return `call ${u.toolCallId} ${u.kind}`;
      case 'tool_call_update': return `end ${u.toolCallId} ${u.status}`;
      default: return u.sessionUpdate;
    }
  });
  assert.deepEqual(replay, [
    'user what does a.txt say?', `call ${sessionId}/r1 read`, `end ${sessionId}/r1 completed`, 'agent It says a.',
  ]);
});

test('the modes as the config option of category mode, for a client that reads only configOptions', opts, async (t) => {
  const fake = await startFakeGemini({ turns: [] });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(tmpHome(), fake.env));
  t.after(() => a.close());
  await initialize(a.agent);
  const { sessionId, configOptions } = await newSession(a.agent, makeWorkspace());
  const modeOf = (opts) => opts.find((o) => o.category === 'mode');
  const mode = modeOf(configOptions);
  assert.ok(mode, `a mode option among ${JSON.stringify(configOptions)}`);
  assert.equal(mode.currentValue, 'default');
  assert.deepEqual(mode.options.map((o) => o.value), ['default', 'auto_edit', 'yolo', 'plan']);

  const res = await a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: mode.id, value: 'plan' });
  assert.equal(modeOf(res.configOptions).currentValue, 'plan');
  await a.settled(() => a.of('current_mode_update').length > 0, 'current_mode_update for the clients of modes');
  assert.deepEqual(a.of('current_mode_update').map((u) => u.currentModeId), ['plan']);

  await a.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'auto_edit' });
  await a.settled(() => a.of('config_option_update').length > 0, 'config_option_update');
  assert.deepEqual(a.of('config_option_update').map((u) => modeOf(u.configOptions).currentValue), ['auto_edit']);
  await assert.rejects(a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: mode.id, value: 'reckless' }),
    (err) => err.code === -32602);
});

test('malformed input gets JSON-RPC errors, and the agent keeps serving', opts, async (t) => {
  const { proc, exited, stderr } = spawnAgent(agentEnv(tmpHome(), { GEMINI_API_KEY: 'k', GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9' }));
  t.after(async () => { proc.stdin.end(); await exited; });
  const cases = [
    ['{"jsonrpc":"2.0","id":1,"method":"initialize"', null, -32700, /not JSON/],
    ['[1]', null, -32600, /batches/],
    ['{"jsonrpc":"2.0","id":2,"method":"nope/nope","params":{}}', 2, -32601, /Method not found/],
    ['{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"gone","prompt":[{"type":"text","text":"hi"}]}}', 3, -32602, /unknown session "gone"/],
    ['{"jsonrpc":"2.0","id":4,"method":"initialize","params":7}', 4, -32602, /Invalid params/],
  ];
  const lines = [];
  let buf = '';
  proc.stdout.on('data', (d) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
  });
  for (const [line] of cases) proc.stdin.write(line + '\n');
  proc.stdin.write('{"jsonrpc":"2.0","id":"ok","method":"initialize","params":{"protocolVersion":1}}\n');
  await until(() => lines.length === cases.length + 1, `${cases.length + 1} answers (stderr: ${stderr()})`);
  const nulls = lines.filter((l) => l.id === null);
  for (const [line, id, code, says] of cases) {
    const answer = id === null ? nulls.shift() : lines.find((l) => l.id === id);
    assert.ok(answer?.error, `no error for ${line}`);
    assert.equal(answer.error.code, code, line);
    assert.match(`${answer.error.message} ${JSON.stringify(answer.error.data ?? '')}`, says, line);
  }
  assert.equal(lines.find((l) => l.id === 'ok').result.protocolVersion, 1);
});

// The parts of ACP v1 stabilised in 2026.

/** Writes n stored sessions started in root, newest first from skip seconds before noon. */
function storeSessions(home, root, skip, n) {
  const dir = path.join(home, 'state', 'agentls', 'sessions');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ids = [];
  for (let i = skip; i < skip + n; i++) {
    const at = new Date(Date.UTC(2026, 5, 1, 12, 0, 0) - i * 1000);
    const id = `${at.toISOString().replace(/[-:]/g, '').replace('T', '-').replace('Z', '')}-${i.toString(16).padStart(8, '0')}`;
    const file = path.join(dir, `${id}.jsonl`);
    fs.writeFileSync(file, `{"type":"session","id":"${id}","created":"${at.toISOString()}","roots":${JSON.stringify([root])}}\n`
      + `{"type":"prompt","text":"stored prompt ${i}","time":"${at.toISOString()}"}\n`, { mode: 0o600 });
    fs.utimesSync(file, at, at);
    ids.push(id);
  }
  return ids;
}

test('session/list in pages, session_info_update, usage_update, message ids, session/delete', opts, async (t) => {
  const root = makeWorkspace();
  const other = makeWorkspace();
  const home = tmpHome();
  const stored = storeSessions(home, root, 0, 70);
  storeSessions(home, other, 70, 10);
  const fake = await startFakeGemini({ turns: [{ text: 'Hello.', chunks: 1, usage: { inputTokens: 321 } }] });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(home, fake.env));
  t.after(() => a.close());
  const init = await initialize(a.agent);
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.delete, {});
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.additionalDirectories, {});

  const listed = [];
  let cursor;
  let pages = 0;
  do {
    const res = await a.agent.request(acp.methods.agent.session.list, { cwd: root, ...(cursor ? { cursor } : {}) });
    listed.push(...res.sessions.map((s) => s.sessionId));
    cursor = res.nextCursor;
    pages++;
  } while (cursor);
  assert.deepEqual(listed, stored, 'every session of the cwd, newest first, once');
  assert.ok(pages > 1, `${pages} page(s)`);
  const first = await a.agent.request(acp.methods.agent.session.list, { cwd: root });
  await assert.rejects(a.agent.request(acp.methods.agent.session.list, { cwd: other, cursor: first.nextCursor }),
    (err) => err.code === -32602 && /another workspace/.test(err.message));

  const { sessionId } = await newSession(a.agent, root);
  assert.equal((await prompt(a.agent, sessionId, 'Greet me\nplease')).stopReason, 'end_turn');
  await a.settled(() => a.of('usage_update').length > 0, 'usage_update');
  assert.deepEqual(a.of('session_info_update').map((u) => u.title), ['Greet me']);
  const usage = a.of('usage_update')[0];
  assert.equal(usage.used, 321);
  assert.ok(usage.size > 0, `context window ${usage.size}`);
  assert.ok(a.of('agent_message_chunk').every((u) => typeof u.messageId === 'string' && u.messageId.length > 0), 'message ids');

  await a.agent.request(acp.methods.agent.session.delete, { sessionId });
  const after = await a.agent.request(acp.methods.agent.session.list, { cwd: root });
  assert.ok(!after.sessions.some((s) => s.sessionId === sessionId), 'the deleted session is not listed');
  await assert.rejects(a.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: root, mcpServers: [] }),
    (err) => err.code === -32002);
  await assert.rejects(a.agent.request(acp.methods.agent.session.resume, { sessionId: stored[0], cwd: other, mcpServers: [] }),
    (err) => err.code === -32602 && /belongs to the workspace/.test(err.message));
});

test('additionalDirectories: a root the tools reach; one of the user\'s keys refused', opts, async (t) => {
  const root = makeWorkspace();
  const extra = makeWorkspace({ 'b.txt': 'from the extra root\n' });
  const fake = await startFakeGemini({
    turns: [{ calls: [call('r1', 'read_file', { file_path: path.join(extra, 'b.txt') })] }, { text: 'Read it.' }],
  });
  t.after(() => fake.stop());
  const home = tmpHome();
  fs.mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
  const a = startAgent(agentEnv(home, fake.env));
  t.after(() => a.close());
  await initialize(a.agent);
  await assert.rejects(a.agent.request(acp.methods.agent.session.new, { cwd: root, additionalDirectories: [path.join(home, '.ssh')], mcpServers: [] }),
    (err) => err.code === -32602 && /keeps from commands/.test(err.message));
  await assert.rejects(a.agent.request(acp.methods.agent.session.new, { cwd: root, additionalDirectories: ['relative'], mcpServers: [] }),
    (err) => err.code === -32602 && /absolute/.test(err.message));
  const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd: root, additionalDirectories: [extra], mcpServers: [] });
  assert.equal((await prompt(a.agent, sessionId, 'read b.txt')).stopReason, 'end_turn');
  assert.match(JSON.stringify(fake.requests()[1].contents.at(-1)), /from the extra root/);
  const list = await a.agent.request(acp.methods.agent.session.list, { cwd: root });
  assert.deepEqual(list.sessions.map((s) => s.additionalDirectories), [[extra]]);
});

test('$/cancel_request of a prompt stops it as session/cancel does', opts, async (t) => {
  const fake = await startFakeGemini({ turns: [{ text: 'Working', chunks: 1, hang: true }] });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(tmpHome(), fake.env));
  t.after(() => a.close());
  await initialize(a.agent);
  const { sessionId } = await newSession(a.agent, makeWorkspace());
  const abort = new AbortController();
  const answer = a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'work' }] }, { cancellationSignal: abort.signal })
    .then((r) => r.stopReason, (err) => (err.code === -32800 ? 'request cancelled' : Promise.reject(err)));
  await a.waitFor((n) => n.update.sessionUpdate === 'agent_message_chunk', 'the prompt to stream');
  abort.abort();
  assert.ok(['cancelled', 'request cancelled'].includes(await withTimeout(answer, 20000, 'the withdrawn prompt\'s answer')));
});

test('the boolean thoughts option of category model_config', opts, async (t) => {
  const fake = await startFakeGemini({ turns: [{ text: 'One.' }] });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(tmpHome(), fake.env));
  t.after(() => a.close());
  await initialize(a.agent);
  const { sessionId, configOptions } = await newSession(a.agent, makeWorkspace());
  const thoughts = configOptions.find((o) => o.id === 'thoughts');
  assert.deepEqual([thoughts?.type, thoughts?.category, thoughts?.currentValue], ['boolean', 'model_config', false]);
  const res = await a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'thoughts', type: 'boolean', value: true });
  assert.equal(res.configOptions.find((o) => o.id === 'thoughts').currentValue, true);
  assert.equal((await prompt(a.agent, sessionId, 'one')).stopReason, 'end_turn');
  assert.equal(fake.requests()[0].generationConfig?.thinkingConfig?.includeThoughts, true);
});

test('live shell output by the _meta.terminal_* convention, head and tail bounded', opts, async (t) => {
  const fake = await startFakeGemini({
    turns: [{ calls: [call('s1', 'run_shell_command', { command: 'seq 1 60000' })] }, { text: 'Counted.' }],
  });
  t.after(() => fake.stop());
  const a = startAgent(agentEnv(tmpHome(), fake.env), () => 'allow_once');
  t.after(() => a.close());
  await initialize(a.agent, { _meta: { terminal_output: true } });
  const root = makeWorkspace();
  const { sessionId } = await newSession(a.agent, root);
  assert.equal((await prompt(a.agent, sessionId, 'count')).stopReason, 'end_turn');
  const id = `${sessionId}/s1`;
  await a.settled(() => a.updates.some((n) => n.update._meta?.terminal_exit), 'terminal_exit');
  const mine = a.updates.map((n) => n.update).filter((u) => u.toolCallId === id);
  const start = mine.find((u) => u.sessionUpdate === 'tool_call');
  assert.deepEqual(start.content, [{ type: 'terminal', terminalId: id }]);
  assert.deepEqual(start._meta.terminal_info, { terminal_id: id, cwd: root });
  const out = mine.map((u) => u._meta?.terminal_output?.data ?? '').join('');
  assert.ok(out.startsWith('1\n2\n3\n') && out.endsWith('59999\n60000\n'), 'the head and the tail');
  assert.match(out, /bytes of output are not shown here; the full output is saved in /);
  assert.ok(out.length < 140 * 1024, `${out.length} bytes shown`);
  assert.deepEqual(mine.at(-1)._meta.terminal_exit, { terminal_id: id, exit_code: 0, signal: null });
  assert.equal(mine.at(-1).status, 'completed');
});
