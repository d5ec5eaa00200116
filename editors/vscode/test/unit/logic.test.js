'use strict';
// Unit tests of the extension's own logic (src/logic, compiled to out/logic by
// `npm run compile`): settings to server options, confirmation choices and answers, the
// chat transcript's handling of agentls/update, #file mentions, the status bar text and
// tooltip.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const out = path.join(__dirname, '..', '..', 'out', 'logic');
const settings = require(path.join(out, 'settings.js'));
const confirm = require(path.join(out, 'confirm.js'));
const chat = require(path.join(out, 'chat.js'));
const mentions = require(path.join(out, 'mentions.js'));
const status = require(path.join(out, 'status.js'));

test('serverSettings sends only what is set, the dedicated settings over agentls.settings', () => {
  assert.equal(settings.serverSettings({ approvalMode: 'default', model: '', provider: {}, mcpServers: {}, settings: {} }), undefined);
  assert.deepEqual(
    settings.serverSettings({
      approvalMode: 'auto_edit',
      model: ' gemini-2.5-pro ',
      provider: { type: 'openai', baseUrl: 'http://localhost:11434/v1' },
      mcpServers: { fs: { command: 'mcp-fs' } },
      settings: { model: 'other', excludeTools: ['web_fetch'], approvalMode: 'plan' },
    }),
    {
      approvalMode: 'auto_edit',
      model: 'gemini-2.5-pro',
      provider: { type: 'openai', baseUrl: 'http://localhost:11434/v1' },
      mcpServers: { fs: { command: 'mcp-fs' } },
      excludeTools: ['web_fetch'],
    },
  );
  // "default" does not override a mode chosen in agentls.settings (or the user's file).
  assert.deepEqual(settings.serverSettings({ approvalMode: 'default', settings: { approvalMode: 'plan' } }), { approvalMode: 'plan' });
  // Junk is not sent.
  assert.equal(settings.serverSettings({ approvalMode: 'sometimes', model: 3, provider: [], settings: 'x' }), undefined);
});

test('serverCommand, serverEnv and needsRestart', () => {
  assert.deepEqual(settings.serverCommand({}), { command: 'agentls', args: ['serve'] });
  assert.deepEqual(settings.serverCommand({ path: '/opt/agentls', logFile: '/tmp/a.log' }), {
    command: '/opt/agentls',
    args: ['serve', '--log-file', '/tmp/a.log'],
  });
  assert.deepEqual(settings.serverEnv({ A: '1', B: undefined }, { env: { C: '2', D: 4 } }), { A: '1', C: '2' });
  assert.equal(settings.needsRestart({ path: 'a' }, { path: 'a', model: 'x' }), false);
  assert.equal(settings.needsRestart({ path: 'a' }, { path: 'b' }), true);
  assert.equal(settings.needsRestart({ env: {} }, { env: { X: '1' } }), true);
  assert.equal(settings.needsRestart({ logFile: '' }, { logFile: '/tmp/l' }), true);
  assert.equal(settings.modelLabel({ model: '', settings: { model: { name: 'm1' } } }), 'm1');
  assert.equal(settings.modelLabel({}), 'default model');
});

// The choices the server offers for `echo hi` and for a line no "always" can cover
// (confirm.Policy.Offer), as agentls/confirm carries them.
const echoChoices = [
  { id: 'once', outcome: 'proceed_once', label: 'Allow once' },
  { id: 'always', outcome: 'proceed_always', label: 'Always allow echo for this session', covers: 'echo' },
  { id: 'always_save', outcome: 'proceed_always', label: 'Always allow echo, and save it in your settings', covers: 'echo', persist: 'user' },
  { id: 'reject', outcome: 'cancel', label: 'Reject' },
  { id: 'reject_always', outcome: 'reject_always', label: 'Always reject echo for this session', covers: 'echo' },
];
const loop = 'n=0; while test $n -lt 3; do echo $n; sleep 1; n=$((n+1)); done';
const loopChoices = [
  { id: 'once', outcome: 'proceed_once', label: 'Allow once' },
  { id: 'reject', outcome: 'cancel', label: 'Reject' },
  { id: 'reject_always', outcome: 'reject_always', label: 'Always reject n=0, test, echo, sleep, n=$((n+1)) for this session' },
];

test('choices: the server\'s choices, labels as given, answered by id', () => {
  const exec = { id: '1', type: 'execute', command: 'echo hi', rootCommands: ['echo'], choices: echoChoices };
  const got = confirm.choices(exec);
  assert.deepEqual(got.map((c) => c.label), echoChoices.map((c) => c.label));
  assert.deepEqual(got.map((c) => confirm.answerFor(c)), echoChoices.map((c) => ({ choice: c.id })));
  assert.deepEqual(got.map((c) => c.reject), [false, false, false, true, true]);
  assert.deepEqual(confirm.refusal(exec), { choice: 'reject' });
  assert.equal(confirm.alwaysNote(exec), undefined, 'the labels say what "always" covers');

  // The line of issue 21: the client no longer builds "Always allow n=0, test, …" from
  // rootCommands; it offers what the server offers, and says "always" cannot cover it.
  const l = { id: '2', type: 'execute', command: loop, rootCommands: ['n=0', 'test', 'echo', 'sleep', 'n=$((n+1))'], choices: loopChoices };
  const labels = confirm.choices(l).map((c) => c.label);
  assert.deepEqual(labels, loopChoices.map((c) => c.label));
  assert.ok(!labels.some((x) => /^Always allow/.test(x)), `no "Always allow": ${labels}`);
  assert.match(confirm.alwaysNote(l), /asked every time/);

  // Questions with choices of their own (folder trust): ids are their outcomes.
  const trust = {
    id: '3',
    type: 'info',
    choices: [
      { id: 'proceed_once', outcome: 'proceed_once', label: 'Trust this folder' },
      { id: 'proceed_always', outcome: 'proceed_always', label: 'Trust the parent folder' },
      { id: 'cancel', outcome: 'cancel', label: 'Not now' },
    ],
  };
  assert.deepEqual(confirm.choices(trust).map((c) => c.label), ['Trust this folder', 'Trust the parent folder', 'Not now']);
  assert.deepEqual(confirm.refusal(trust), { choice: 'cancel' });

  // A choice the extension does not know the outcome of is still offered: its id answers it.
  const future = { id: '4', type: 'mcp', choices: [{ id: 'once', outcome: 'proceed_once', label: 'Allow once' }, { id: 'later', outcome: 'proceed_later', label: 'Ask me later' }] };
  assert.deepEqual(confirm.choices(future).map((c) => confirm.answerFor(c)), [{ choice: 'once' }, { choice: 'later' }]);
  // Entries that cannot be shown or answered are left out.
  const junk = { id: '5', type: 'info', choices: [null, { outcome: 'bogus', label: 'no id' }, { id: 'x', outcome: 'cancel' }, { id: 'reject', outcome: 'cancel', label: 'Reject' }] };
  assert.deepEqual(confirm.choices(junk).map((c) => c.id), ['reject']);
  // A question's own choices without ids (the server's folder trust question) are
  // answered with their outcomes: a choice id the server does not know is a refusal.
  const bare = { id: '6', type: 'info', choices: [{ outcome: 'proceed_once', label: 'Trust this folder' }, { outcome: 'cancel', label: 'Not now' }] };
  assert.deepEqual(confirm.choices(bare).map((c) => [c.label, confirm.answerFor(c)]), [
    ['Trust this folder', { outcome: 'proceed_once' }],
    ['Not now', { outcome: 'cancel' }],
  ]);
  assert.deepEqual(confirm.refusal(bare), { outcome: 'cancel' });
});

test('notificationButtons: a few short choices as they are; else Allow once, Reject and More…', () => {
  const shown = (cs) => {
    const n = confirm.notificationButtons(confirm.choices({ id: 'n', type: 'execute', choices: cs }));
    return n.buttons.map((c) => c.label).concat(n.more ? [confirm.moreLabel] : []);
  };
  const trust = [
    { id: 'proceed_once', outcome: 'proceed_once', label: 'Trust this folder' },
    { id: 'proceed_always', outcome: 'proceed_always', label: 'Trust the parent folder' },
    { id: 'cancel', outcome: 'cancel', label: 'Not now' },
  ];
  assert.deepEqual(shown(trust), ['Trust this folder', 'Trust the parent folder', 'Not now']);
  assert.deepEqual(shown([echoChoices[0], echoChoices[3]]), ['Allow once', 'Reject']);
  // Five long labels would be cut to "Al…", "Always all…" in a toast.
  assert.deepEqual(shown(echoChoices), ['Allow once', 'Reject', 'More…']);
  assert.deepEqual(shown(loopChoices), ['Allow once', 'Reject', 'More…']);
});

test('choices: without the server\'s choices, Allow once and Reject answered by outcome', () => {
  for (const d of [
    { id: '1', type: 'execute', command: 'go test', rootCommands: ['go'] },
    { id: '2', type: 'mcp', server: 's', tool: 't', choices: [] },
    { id: '3', type: 'edit', choices: [{ outcome: 'bogus' }] },
  ]) {
    const got = confirm.choices(d);
    assert.deepEqual(got.map((c) => [c.label, confirm.answerFor(c)]), [
      ['Allow once', { outcome: 'proceed_once' }],
      ['Reject', { outcome: 'cancel' }],
    ], d.id);
    assert.deepEqual(confirm.refusal(d), { outcome: 'cancel' });
    assert.equal(confirm.onceChoice(d).outcome, 'proceed_once');
  }
  assert.equal(confirm.alwaysNote({ id: '4', type: 'execute', command: 'go test' }), undefined, 'nothing said about what the server did not say');
  assert.match(confirm.alwaysNote({ id: '5', type: 'info', noAlways: true, choices: [echoChoices[0], echoChoices[3]] }), /asked every time/);
  // ask_user's questions are answered in the quick input: the card can only dismiss them.
  const ask = confirm.choices({ id: '6', type: 'ask_user' });
  assert.deepEqual(ask.map((c) => [c.label, confirm.answerFor(c)]), [['Dismiss', { outcome: 'cancel' }]]);
  assert.equal(confirm.question({ id: '7', type: 'execute', command: 'ls', directory: '/w' }), 'Run `ls` in /w?');
});

test('editAnswer: the proposal as shown takes the choice; an edited one is the user version in the file\'s line endings', () => {
  const edit = {
    id: 'e',
    type: 'edit',
    choices: [
      { id: 'once', outcome: 'proceed_once', label: 'Allow once' },
      { id: 'always', outcome: 'proceed_always', label: 'Allow every edit for this session', covers: 'every edit' },
      { id: 'always_save', outcome: 'proceed_always_tool', label: 'Always allow replace, and save it in your settings', persist: 'user' },
      { id: 'reject', outcome: 'cancel', label: 'Reject' },
      { id: 'reject_always', outcome: 'reject_always', label: 'Always reject replace for this session' },
    ],
  };
  const [once, always, save, reject, rejectAlways] = confirm.choices(edit);
  assert.deepEqual(confirm.onceChoice(edit), once);
  assert.deepEqual(confirm.editAnswer('a\nb\n', 'a\nb\n', once), { choice: 'once' });
  assert.deepEqual(confirm.editAnswer('a\nb\n', 'a\nb\n', always), { choice: 'always' });
  assert.deepEqual(confirm.editAnswer('a\nb\n', 'a\nb\n', save), { choice: 'always_save' });
  // No "always" covers the user's version: it is sent as theirs, once.
  assert.deepEqual(confirm.editAnswer('a\nb\n', 'a\nB\n', always), { outcome: 'modify_with_editor', content: 'a\nB\n' });
  // A refusal stays one, whatever the proposal holds.
  assert.deepEqual(confirm.editAnswer('a\nb\n', 'a\nB\n', reject), { choice: 'reject' });
  assert.deepEqual(confirm.editAnswer('a\nb\n', 'a\nB\n', rejectAlways), { choice: 'reject_always' });
  // The editor handed back LF for a CRLF proposal: unchanged, so plain consent.
  assert.deepEqual(confirm.editAnswer('a\r\nb\r\n', 'a\nb\n', once), { choice: 'once' });
  assert.deepEqual(confirm.editAnswer('a\r\nb\r\n', 'a\nc\n', once), { outcome: 'modify_with_editor', content: 'a\r\nc\r\n' });
  // Without the server's choices, Accept is the outcome.
  assert.deepEqual(confirm.editAnswer('a\n', 'a\n', confirm.onceChoice({ id: 'f', type: 'edit' })), { outcome: 'proceed_once' });
});

test('Transcript applies updates: chunks coalesce, tool calls update in place, output is bounded', () => {
  const t = new chat.Transcript();
  assert.deepEqual(t.addUser('fix it\nplease', 'a.go:3'), [0]);
  assert.equal(t.title, 'fix it');
  assert.deepEqual(t.apply({ kind: 'thought_chunk', text: 'hmm' }), [1]);
  assert.deepEqual(t.apply({ kind: 'message_chunk', text: 'Let me ' }), [2]);
  assert.deepEqual(t.apply({ kind: 'message_chunk', text: 'look.' }), [2]);
  assert.equal(t.items[2].text, 'Let me look.');
  assert.deepEqual(t.apply({ kind: 'message_chunk', text: '' }), []);
  const call = {
    kind: 'tool_call',
    toolCallId: 's/c1',
    name: 'run_shell_command',
    title: 'go test',
    toolKind: 'execute',
    status: 'pending',
    locations: [{ uri: 'file:///w/a.go', range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } } }],
    rawInput: { command: 'go test ./...' },
  };
  assert.deepEqual(t.apply(call), [3]);
  assert.equal(t.tool('s/c1').command, 'go test ./...');
  assert.deepEqual(t.apply({ kind: 'tool_call_update', toolCallId: 's/c1', status: 'in_progress' }), [3]);
  t.apply({ kind: 'tool_call_update', toolCallId: 's/c1', output: 'ok  \n' });
  t.apply({ kind: 'tool_call_update', toolCallId: 's/c1', output: 'PASS\n' });
  assert.equal(t.tool('s/c1').output, 'ok  \nPASS\n');
  assert.equal(t.openTools().length, 1);
  t.apply({ kind: 'tool_call_update', toolCallId: 's/c1', status: 'completed', content: { text: 'exit 0' } });
  assert.equal(t.tool('s/c1').status, 'completed');
  assert.equal(t.tool('s/c1').text, 'exit 0');
  assert.equal(t.openTools().length, 0);
  // A call the transcript does not show is ignored.
  assert.deepEqual(t.apply({ kind: 'tool_call_update', toolCallId: 'other', status: 'failed' }), []);
  // Text after a tool card starts a new message.
  assert.deepEqual(t.apply({ kind: 'message_chunk', text: 'Done.' }), [4]);
  // Plans update in place while nothing followed them.
  assert.deepEqual(t.apply({ kind: 'plan', entries: [{ content: 'a', status: 'pending' }] }), [5]);
  assert.deepEqual(t.apply({ kind: 'plan', entries: [{ content: 'a', status: 'completed' }] }), [5]);
  assert.equal(t.items[5].entries[0].status, 'completed');
  assert.deepEqual(t.end('cancelled', { inputTokens: 10, outputTokens: 2 }), [6]);
  assert.equal(t.items[6].text, 'cancelled · 10 in / 2 out tokens');
  assert.equal(t.items[6].level, 'warning');

  const big = new chat.Transcript();
  big.apply({ ...call, toolCallId: 'x' });
  big.apply({ kind: 'tool_call_update', toolCallId: 'x', output: 'a'.repeat(chat.maxOutput) });
  big.apply({ kind: 'tool_call_update', toolCallId: 'x', output: 'END' });
  assert.equal(big.tool('x').output.length, chat.maxOutput);
  assert.ok(big.tool('x').output.endsWith('END'));
  assert.equal(big.tool('x').outputTruncated, true);
});

test('a failed call keeps its error and diff', () => {
  const t = new chat.Transcript();
  t.apply({ kind: 'tool_call', toolCallId: 'e', name: 'replace', title: 'Edit a', toolKind: 'edit', status: 'pending', locations: [] });
  t.apply({
    kind: 'tool_call_update',
    toolCallId: 'e',
    status: 'failed',
    content: { diff: { path: '/w/a', diff: '--- a\n+++ b\n' } },
    error: { type: 'stale_content', message: 'the file changed' },
  });
  assert.equal(t.tool('e').error, 'the file changed');
  assert.equal(t.tool('e').diff.diff, '--- a\n+++ b\n');
});

test('locationLabel is relative to a root, with a 1-based line', () => {
  assert.equal(chat.locationLabel({ uri: 'file:///w/src/a%20b.go', range: { start: { line: 4, character: 0 }, end: { line: 4, character: 1 } } }, ['/w']), 'src/a b.go:5');
  assert.equal(chat.locationLabel({ uri: 'file:///elsewhere/x' }, ['/w']), '/elsewhere/x');
});

test('#file mentions are parsed and attached', () => {
  const m = mentions.parseMentions('look at #file:src/a.go, and #file:`my notes.md` but not a#file:x or #filex');
  assert.deepEqual(m.map((x) => x.path), ['src/a.go', 'my notes.md']);
  assert.equal('look at #file:src/a.go, and'.slice(m[0].start, m[0].end), '#file:src/a.go');
  assert.equal(mentions.mentionFor('a b.txt'), '#file:`a b.txt`');
  assert.equal(mentions.mentionFor('a.txt'), '#file:a.txt');
  const p = mentions.withAttachments('explain', [
    { path: '/w/a.go', text: 'package a\n' },
    { path: 'gone.txt', error: 'not found' },
    { path: '/w/md.md', text: '```go\nx\n```\n' },
  ]);
  assert.match(p, /^explain\n\nFiles the user mentioned/);
  assert.match(p, /\/w\/a\.go:\n```\npackage a\n```/);
  assert.match(p, /gone\.txt: not found/);
  assert.match(p, /````\n```go\nx\n```\n````/);
  assert.equal(mentions.withAttachments('x', []), 'x');
  const long = mentions.withAttachments('x', [{ path: '/w/big', text: 'y'.repeat(mentions.maxAttached + 10) }]);
  assert.match(long, /cut at 65536 characters/);
});

test('statusView: waiting for approval beats working beats idle', () => {
  const base = { state: 'idle', mode: 'default', model: 'gemini-2.5-flash', waiting: 0, running: 0 };
  assert.equal(status.statusView(base).text, '$(hubot) agentls: idle · default · gemini-2.5-flash');
  assert.equal(status.statusView({ ...base, running: 2 }).text, '$(sync~spin) agentls: working · default · gemini-2.5-flash');
  const w = status.statusView({ ...base, running: 1, waiting: 1, mode: 'auto_edit' });
  assert.equal(w.text, '$(bell-dot) agentls: waiting for approval · auto_edit · gemini-2.5-flash');
  assert.equal(w.background, 'statusBarItem.warningBackground');
  assert.match(status.statusView({ ...base, waiting: 3 }).text, /3 waiting for approval/);
  const e = status.statusView({ ...base, state: 'error', error: 'not found' });
  assert.match(e.tooltip, /not found/);
  assert.equal(e.background, 'statusBarItem.errorBackground');
  assert.equal(status.statusView({ ...base, state: 'starting', running: 1 }).text.startsWith('$(loading~spin) agentls: starting'), true);
});

// The sandbox of agentls.status as `agentls sandbox --json` prints it on this machine,
// with Landlock alone, and with nothing (AGENTLS_SANDBOX_MACHINE=landlock / none).
const sandboxFull = {
  contained: true,
  level: 'landlock+namespaces',
  machine: { os: 'linux', landlockABI: 7, userNamespaces: true, seccomp: true },
  writable: ['/w', '/tmp'],
  readOnly: ['/w/.git/config'],
  hidden: ['/home/u/.ssh'],
  network: false,
  autoAllow: false,
  summary: 'contained (landlock+namespaces, network off)',
};
const landlockReason =
  'Landlock only (turned off by AGENTLS_SANDBOX_MACHINE=landlock): paths inside the workspace such as .git/hooks are not kept read-only and secrets such as ~/.ssh are not hidden';
const sandboxLandlock = {
  ...sandboxFull,
  level: 'landlock',
  reason: landlockReason,
  summary: `contained (landlock, network off); ${landlockReason}`,
};
const noneReason = 'Landlock: turned off by AGENTLS_SANDBOX_MACHINE=none; user namespaces: turned off by AGENTLS_SANDBOX_MACHINE=none';
const sandboxNone = {
  contained: false,
  level: 'none',
  reason: noneReason,
  machine: { os: 'linux', landlockABI: 0, landlockError: 'turned off by AGENTLS_SANDBOX_MACHINE=none', userNamespaces: false, seccomp: false },
  network: false,
  autoAllow: false,
  summary: `not contained: ${noneReason}`,
};

test('sandboxOf reads the sandbox of agentls.status', () => {
  assert.deepEqual(status.sandboxOf({ root: '/w', sandbox: sandboxFull }), {
    contained: true,
    level: 'landlock+namespaces',
    summary: 'contained (landlock+namespaces, network off)',
    reason: undefined,
    network: false,
  });
  assert.deepEqual(status.sandboxOf({ sandbox: sandboxNone }), {
    contained: false,
    level: 'none',
    summary: `not contained: ${noneReason}`,
    reason: noneReason,
    network: false,
  });
  // A summary is made when the server gave none.
  assert.equal(status.sandboxOf({ sandbox: { contained: false, reason: 'no Landlock' } }).summary, 'not contained: no Landlock');
  // An older server's status has no sandbox; junk is none.
  assert.equal(status.sandboxOf({ root: '/w', trusted: false }), undefined);
  assert.equal(status.sandboxOf({ sandbox: { level: 'none' } }), undefined);
  assert.equal(status.sandboxOf(null), undefined);
  assert.equal(status.sandboxOf('x'), undefined);
});

test('statusView: the tooltip says how shell commands are contained; not contained shows in the text', () => {
  const base = { state: 'idle', mode: 'default', model: 'gemini-2.5-flash', waiting: 0, running: 0 };
  // Not known yet (or an older server): nothing is said.
  assert.doesNotMatch(status.statusView(base).tooltip, /Shell commands/);

  const full = status.statusView({ ...base, sandbox: status.sandboxOf({ sandbox: sandboxFull }) });
  assert.equal(full.text, '$(hubot) agentls: idle · default · gemini-2.5-flash');
  assert.match(full.tooltip, /\nShell commands: contained \(landlock\+namespaces, network off\)\n/);
  assert.equal(full.background, undefined);

  const landlock = status.statusView({ ...base, sandbox: status.sandboxOf({ sandbox: sandboxLandlock }) });
  assert.equal(landlock.text, '$(hubot) agentls: idle · default · gemini-2.5-flash', 'Landlock alone is contained: the text stays');
  assert.ok(landlock.tooltip.includes(`Shell commands: contained (landlock, network off); ${landlockReason}`), landlock.tooltip);

  const none = status.statusView({ ...base, sandbox: status.sandboxOf({ sandbox: sandboxNone }) });
  assert.equal(none.text, '$(hubot) agentls: idle · default · gemini-2.5-flash · $(warning) not contained');
  assert.ok(none.tooltip.includes(`Shell commands: not contained: ${noneReason}`), none.tooltip);
  // Whatever the state of the calls.
  assert.match(status.statusView({ ...base, running: 1, sandbox: status.sandboxOf({ sandbox: sandboxNone }) }).text, /working .* · \$\(warning\) not contained$/);
  // A server that does not run contains nothing and runs nothing: its last answer is not shown.
  for (const state of ['stopped', 'error', 'starting']) {
    const v = status.statusView({ ...base, state, sandbox: status.sandboxOf({ sandbox: sandboxNone }) });
    assert.doesNotMatch(v.text, /not contained/, state);
    assert.doesNotMatch(v.tooltip, /Shell commands/, state);
  }
});

test('Transcript.replay shows a resumed session as it ran: prompts, answers, tool cards', () => {
  const t = new chat.Transcript();
  const n = t.replay([
    { kind: 'user_message', text: 'what is in notes.txt?' },
    { kind: 'message_chunk', text: 'Let me ' },
    { kind: 'message_chunk', text: 'read it.' },
    { kind: 'tool_call', toolCallId: 's/r1', name: 'read_file', title: 'Read notes.txt', toolKind: 'read', status: 'pending', locations: [{ uri: 'file:///w/notes.txt' }] },
    { kind: 'tool_call_update', toolCallId: 's/r1', status: 'completed', content: { text: 'hello' } },
    { kind: 'message_chunk', text: 'It says hello.' },
    { kind: 'user_message', text: 'thanks' },
    'not an update',
    null,
    { kind: 'message_chunk', text: 'You are welcome.' },
  ]);
  assert.equal(n, 2);
  assert.deepEqual(
    t.items.map((i) => `${i.kind}:${i.kind === 'tool' ? i.status : i.text}`),
    ['user:what is in notes.txt?', 'message:Let me read it.', 'tool:completed', 'message:It says hello.', 'user:thanks', 'message:You are welcome.'],
  );
  assert.equal(t.title, 'what is in notes.txt?');
  assert.equal(t.tool('s/r1').text, 'hello');
});

test('the status bar shows the mode and model the server reports', () => {
  assert.deepEqual(status.sessionInfo({ kind: 'session_info', model: 'gemini-2.5-flash', provider: 'gemini' }), { model: 'gemini-2.5-flash', provider: 'gemini' });
  assert.deepEqual(status.sessionInfo({ kind: 'session_info', model: 'm' }), { model: 'm', provider: undefined });
  assert.equal(status.sessionInfo({ kind: 'session_info', model: '' }), undefined);
  assert.equal(status.sessionInfo({ kind: 'current_mode_update', mode: 'yolo' }), undefined);
  assert.equal(status.modeOf({ kind: 'current_mode_update', mode: 'yolo' }), 'yolo');
  assert.equal(status.modeOf({ kind: 'current_mode_update' }), undefined);
  assert.equal(status.modeOf({ kind: 'session_info', model: 'm' }), undefined);
  const base = { state: 'idle', mode: 'plan', model: 'gemini-2.5-flash', waiting: 0, running: 0 };
  const reported = status.statusView({ ...base, provider: 'gemini', modelReported: true });
  assert.equal(reported.text, '$(hubot) agentls: idle · plan · gemini-2.5-flash');
  assert.match(reported.tooltip, /Model: gemini-2\.5-flash \(gemini\)\n/);
  assert.match(status.statusView(base).tooltip, /Model: gemini-2\.5-flash \(the settings; the server names the model it uses with the first prompt\)/);
});

test('package.json: no command of the extension has the name of a server command', () => {
  // vscode-languageclient registers the server's executeCommandProvider commands under
  // their own names; an extension command of the same name fails the client's start.
  const server = ['runTool', 'listTools', 'prompt', 'cancel', 'setApprovalMode', 'discoverTools', 'confirm', 'mcpStatus', 'mcpAuth', 'listPrompts', 'runPrompt', 'trust', 'listSessions', 'sessionHistory', 'undoTurn', 'redoTurn', 'turnDiff', 'metrics', 'listRules', 'removeRule', 'status'].map(
    (c) => `agentls.${c}`,
  );
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const ours = pkg.contributes.commands.map((c) => c.command);
  for (const c of ours) {
    assert.ok(!server.includes(c), `${c} collides with a server command`);
    assert.notEqual(c, 'agentls.chat.focus', 'the view focus command is VS Code\'s own');
  }
  // Every command in menus and keybindings is declared.
  const used = [...Object.values(pkg.contributes.menus).flat(), ...pkg.contributes.keybindings].map((m) => m.command);
  for (const c of used) assert.ok(ours.includes(c), `${c} is used but not declared`);
  assert.ok(pkg.publisher && pkg.icon && pkg.engines.vscode && pkg.categories.length > 0, 'marketplace fields');
});

// Per-hunk consent (issue 23.5): three hunks of a 30-line file (lines 2, 15 and 29
// changed, three lines of context).
const hunkEdit = {
  id: 'h',
  type: 'edit',
  choices: [
    { id: 'once', outcome: 'proceed_once', label: 'Allow once' },
    { id: 'always', outcome: 'proceed_always', label: 'Allow every edit for this session' },
    { id: 'reject', outcome: 'cancel', label: 'Reject' },
  ],
  hunks: [
    { index: 0, oldStart: 1, oldLines: 5, newStart: 1, newLines: 5 },
    { index: 1, oldStart: 12, oldLines: 7, newStart: 12, newLines: 7 },
    { index: 2, oldStart: 26, oldLines: 5, newStart: 26, newLines: 5 },
  ],
};

test('hunksOf: two or more well-formed hunks of an edit, else none', () => {
  assert.equal(confirm.hunksOf(hunkEdit).length, 3);
  assert.deepEqual(confirm.hunksOf({ ...hunkEdit, hunks: [hunkEdit.hunks[0]] }), []);
  assert.deepEqual(confirm.hunksOf({ ...hunkEdit, type: 'execute' }), []);
  assert.deepEqual(confirm.hunksOf({ ...hunkEdit, hunks: [hunkEdit.hunks[0], { index: 1, oldStart: 'x' }] }), []);
  assert.deepEqual(confirm.hunksOf({ ...hunkEdit, hunks: undefined }), []);
});

test('hunkAt: the hunk spanning a 0-based line on either side; an empty side sits between two lines', () => {
  const hs = hunkEdit.hunks;
  for (const [line, want] of [[0, 0], [4, 0], [5, -1], [11, 1], [17, 1], [18, -1], [25, 2], [29, 2], [30, -1]]) {
    assert.equal(confirm.hunkAt(hs, line, 'new'), want, `line ${line}`);
  }
  const del = [{ index: 0, oldStart: 3, oldLines: 2, newStart: 2, newLines: 0 }];
  assert.equal(confirm.hunkAt(del, 1, 'new'), 0);
  assert.equal(confirm.hunkAt(del, 2, 'new'), 0);
  assert.equal(confirm.hunkAt(del, 3, 'new'), -1);
  assert.equal(confirm.hunkAt(del, 3, 'old'), 0);
});

test('firstChange: the first changed line of a hunk, past its context', () => {
  const lines = (n, ch) => Array.from({ length: n }, (_, i) => (ch && ch[i + 1]) || `line ${i + 1}`).join('\n') + '\n';
  const old = lines(30);
  const neu = lines(30, { 2: 'LINE 2', 15: 'LINE 15', 29: 'LINE 29' });
  assert.deepEqual(hunkEdit.hunks.map((h) => confirm.firstChange(h, old, neu)), [1, 14, 28]);
  // CRLF text compares the same.
  assert.equal(confirm.firstChange(hunkEdit.hunks[1], old.replace(/\n/g, '\r\n'), neu.replace(/\n/g, '\r\n')), 14);
});

test('hunkAnswer: the hunks not rejected, once; none rejected is the choice; all rejected a refusal', () => {
  const cs = confirm.choices(hunkEdit);
  const once = cs[0];
  const always = cs[1];
  assert.deepEqual(confirm.hunkAnswer(hunkEdit, [], once), { answer: { choice: 'once' }, covered: true });
  assert.deepEqual(confirm.hunkAnswer(hunkEdit, ['accepted', 'accepted'], once), { answer: { choice: 'once' }, covered: true });
  assert.deepEqual(confirm.hunkAnswer(hunkEdit, ['accepted', 'rejected'], once), {
    answer: { choice: 'once', acceptedHunks: [0, 2] },
    covered: true,
  });
  assert.deepEqual(confirm.hunkAnswer(hunkEdit, ['rejected', 'rejected', 'rejected'], once), { answer: { choice: 'reject' }, covered: true });
  // "always" cannot carry a part: once, and not covered.
  assert.deepEqual(confirm.hunkAnswer(hunkEdit, [undefined, 'rejected'], always), {
    answer: { choice: 'once', acceptedHunks: [0, 2] },
    covered: false,
  });
  // A refusal stays a refusal.
  assert.deepEqual(confirm.hunkAnswer(hunkEdit, ['accepted'], cs[2]), { answer: { choice: 'reject' }, covered: true });
});

test('hunkSummary: each hunk marked, and what Accept applies', () => {
  assert.equal(confirm.hunkSummary([], 3), 'hunks 1? 2? 3? · Accept applies all');
  assert.equal(confirm.hunkSummary(['accepted', 'rejected'], 3), 'hunks 1✓ 2✗ 3? · Accept applies 2 of 3');
  assert.equal(confirm.hunkSummary(['rejected', 'rejected'], 2), 'hunks 1✗ 2✗ · Accept rejects the edit');
});

test('changedLines: the lines a hunk changes, without its context; none for a deletion', () => {
  const old = 'a\nb\nc\nd\ne\nf\ng\n';
  assert.deepEqual(confirm.changedLines({ index: 0, oldStart: 1, oldLines: 7, newStart: 1, newLines: 7 }, old, 'a\nb\nc\nD\ne\nf\ng\n'), { first: 3, last: 3 });
  assert.deepEqual(confirm.changedLines({ index: 0, oldStart: 1, oldLines: 7, newStart: 1, newLines: 8 }, old, 'a\nb\nc\nD\nD2\ne\nf\ng\n'), { first: 3, last: 4 });
  assert.equal(confirm.changedLines({ index: 0, oldStart: 1, oldLines: 7, newStart: 1, newLines: 6 }, old, 'a\nb\nc\ne\nf\ng\n'), undefined);
});

test('commandSuggestions offers the custom commands that start with what is typed, not MCP prompts', () => {
  const list = [
    { server: 'everything', name: 'simple-prompt', description: 'MCP' },
    { server: '', name: 'review', command: '/review', description: 'Reviews' },
    { server: '', name: 'git:commit', command: '/git:commit', description: 'Writes a commit message' },
    { server: '', name: 'git:amend', command: '/git:amend' },
  ];
  assert.deepEqual(mentions.commandSuggestions(list, 'gi'), [
    { command: '/git:amend', description: '' },
    { command: '/git:commit', description: 'Writes a commit message' },
  ]);
  assert.deepEqual(mentions.commandSuggestions(list, '').map((c) => c.command), ['/git:amend', '/git:commit', '/review']);
  assert.deepEqual(mentions.commandSuggestions(list, 'x'), []);
  assert.deepEqual(mentions.commandSuggestions(null, ''), []);
});
