'use strict';
// Streaming output of run_shell_command: window/workDoneProgress/create + $/progress
// begin/report/end where the client supports it, cancellation from the editor, and
// window/logMessage where it does not (docs/protocol.md, "Streaming output").

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { withClient, baseCapabilities, rpc } = require('./lib/client');

const T = { timeout: 30000 };
const P = T;

function progressCapabilities() {
  const caps = baseCapabilities();
  caps.window.workDoneProgress = true;
  return caps;
}

// yolo through initializationOptions, as docs/protocol.md allows ("settings overrides,
// same keys as the settings file").
const yolo = { approvalMode: 'yolo' };

test('run_shell_command streams $/progress begin/report/end', P, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize({ capabilities: progressCapabilities(), initializationOptions: yolo });
    const res = await c.runTool('run_shell_command', {
      command: 'for i in 1 2 3 4 5; do echo progress-line-$i; sleep 0.3; done',
    });
    assert.equal(res.status, 'success', JSON.stringify(res) + c.stderrTail());
    for (let i = 1; i <= 5; i++) assert.match(res.output, new RegExp(`progress-line-${i}`));

    const creates = c.messages('window/workDoneProgress/create');
    assert.equal(creates.length, 1, 'one progress token created');
    const token = creates[0].params.token;
    const progress = c.messages('$/progress').filter((m) => m.params.token === token).map((m) => m.params.value);
    assert.ok(progress.length >= 2, `begin and end at least, got ${JSON.stringify(progress)}`);
    assert.equal(progress[0].kind, 'begin');
    assert.equal(typeof progress[0].title, 'string');
    assert.equal(progress[0].cancellable, true, 'the editor may cancel the call');
    assert.equal(progress.at(-1).kind, 'end');
    const middle = progress.slice(1, -1);
    assert.ok(middle.every((v) => v.kind === 'report'), 'only reports between begin and end');
    assert.ok(middle.length >= 1, 'at least one report for a command printing over 1.5 s');
    for (const v of middle) {
      if (v.message !== undefined) assert.doesNotMatch(v.message, /\n./, `a report carries one line: ${JSON.stringify(v.message)}`);
    }
    assert.ok(middle.some((v) => /progress-line-\d/.test(v.message || '')), `reports carry output lines: ${JSON.stringify(middle)}`);
    // The progress token is created before it is used.
    const firstUse = c.received.findIndex((m) => m.method === '$/progress' && m.params.token === token);
    assert.ok(c.received.indexOf(creates[0]) < firstUse);
    assert.equal(c.messages('window/logMessage').filter((m) => /progress-line/.test(m.params.message)).length, 0,
      'output goes to progress, not to the log, when progress is supported');
    await c.shutdown();
  });
});

test('$/progress reports are throttled (at most 10 a second)', P, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize({ capabilities: progressCapabilities(), initializationOptions: yolo });
    // 400 lines in about a second.
    const res = await c.runTool('run_shell_command', {
      command: 'for i in $(seq 1 40); do for j in $(seq 1 10); do echo burst-$i-$j; done; sleep 0.025; done',
    });
    assert.equal(res.status, 'success', JSON.stringify(res));
    const creates = c.messages('window/workDoneProgress/create');
    assert.equal(creates.length, 1, 'one progress token created');
    const token = creates[0].params.token;
    const msgs = c.messages('$/progress').filter((m) => m.params.token === token);
    const reports = msgs.filter((m) => m.params.value.kind === 'report');
    const seconds = (msgs.at(-1).at - msgs[0].at) / 1000;
    // A bound with one second of slack for the first and last report of a window.
    assert.ok(reports.length <= Math.ceil(seconds * 10) + 10,
      `${reports.length} reports in ${seconds.toFixed(2)} s for 400 lines`);
    assert.ok(reports.length < 400, 'not one report per line');
    await c.shutdown();
  });
});

// Waits until fn() is true, polling; fails after ms.
async function until(fn, what, ms = 10000) {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// A command that records its shell's pid, then sleeps far longer than any test.
function sleeper(c) {
  const pidFile = c.file('shell.pid');
  return { pidFile, command: `echo $$ > ${pidFile}; echo started; sleep 30` };
}

test('window/workDoneProgress/cancel cancels the tool call', P, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize({ capabilities: progressCapabilities(), initializationOptions: yolo });
    const { pidFile, command } = sleeper(c);
    const pending = c.runTool('run_shell_command', { command });
    pending.catch(() => {}); // awaited below; a failure to see progress must not hide behind it
    const begin = await Promise.race([
      c.waitFor((m) => m.method === '$/progress' && m.params.value.kind === 'begin', 'progress begin'),
      pending.then((r) => { throw new Error(`the call ended before any progress: ${JSON.stringify(r)}`); }),
    ]);
    await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 'the command to start');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    await c.notify('window/workDoneProgress/cancel', { token: begin.params.token });
    const res = await pending;
    assert.equal(res.status, 'cancelled', JSON.stringify(res));
    await c.waitFor((m) => m.method === '$/progress' && m.params.token === begin.params.token && m.params.value.kind === 'end', 'progress end', 5000);
    await until(() => !alive(pid), `the shell (pid ${pid}) to be stopped`, 5000);
    await c.shutdown();
  });
});

test('$/cancelRequest cancels a running agentls.runTool', T, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize({ initializationOptions: yolo });
    const { pidFile, command } = sleeper(c);
    const source = new rpc.CancellationTokenSource();
    const pending = c.runTool('run_shell_command', { command }, source.token);
    pending.catch(() => {}); // awaited below
    await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 'the command to start');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    source.cancel();
    // Either answer is LSP-correct: the RequestCancelled error, or a cancelled ToolResult.
    try {
      const res = await pending;
      assert.equal(res.status, 'cancelled', JSON.stringify(res));
    } catch (err) {
      assert.equal(err.code, rpc.LSPErrorCodes.RequestCancelled, `${err.message}`);
    }
    await until(() => !alive(pid), `the shell (pid ${pid}) to be stopped`, 5000);
    // The server keeps serving.
    const next = await c.runTool('read_file', { file_path: 'a.txt' });
    assert.equal(next.status, 'success');
    await c.shutdown();
  });
});

test('without workDoneProgress, output goes to window/logMessage', P, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize({ initializationOptions: yolo });
    const res = await c.runTool('run_shell_command', { command: 'echo log-line-1; sleep 0.2; echo log-line-2' });
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.equal(c.messages('window/workDoneProgress/create').length, 0, 'no progress to a client without it');
    assert.equal(c.messages('$/progress').length, 0);
    const logged = c.messages('window/logMessage').map((m) => m.params.message).join('\n');
    assert.match(logged, /log-line-1/);
    assert.match(logged, /log-line-2/);
    await c.shutdown();
  });
});
