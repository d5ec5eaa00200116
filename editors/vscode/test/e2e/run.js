'use strict';
// End-to-end scenarios of the agentls extension in a real VS Code (see harness.js).
// usage: node test/e2e/run.js [SCENARIO...]; prints "N passed, M failed" and exits 1 on
// any failure.

const assert = require('node:assert/strict');
const path = require('node:path');
const { VSCode, waitFor, sleep, processesWith, debug, need } = require('./harness');

const scenarios = [];
function scenario(name, opts, fn, explicit = false, timeoutMs = 120000) {
  scenarios.push({ name, opts, fn, explicit, timeoutMs });
}

/**
 * The button labels of the notification whose text includes text, in order; null while
 * there is none.
 */
function notificationButtons(v, text) {
  return v.page.evaluate((t) => {
    const toast = [...document.querySelectorAll('.notification-toast')].find((x) => x.textContent.includes(t));
    return toast ? [...toast.querySelectorAll('.monaco-button')].map((b) => b.textContent.trim()) : null;
  }, text);
}

/** The labels of the quick input's rows once its title matches title; null till then. */
function pickLabels(v, title) {
  return v.page.evaluate((t) => {
    const w = document.querySelector('.quick-input-widget');
    if (!w || w.style.display === 'none' || !w.offsetParent || !new RegExp(t).test(w.querySelector('.quick-input-title')?.textContent || '')) return null;
    const labels = [...w.querySelectorAll('.quick-input-list .monaco-list-row .label-name')].map((e) => e.textContent.trim());
    return labels.length > 0 ? labels : null;
  }, title.source);
}

/** Picks the row labelled label in the quick input, once it is there. */
function pickRow(v, label) {
  return waitFor(`"${label}" in the quick input`, () =>
    v.page.evaluate((l) => {
      const row = [...document.querySelectorAll('.quick-input-list .monaco-list-row')].find((r) => r.querySelector('.label-name')?.textContent.trim() === l);
      if (row) {
        row.click();
        return true;
      }
      return false;
    }, label),
  );
}

// --- a prompt and a read ------------------------------------------------------------

scenario(
  'prompt_read_resume_mention',
  (ws) => ({
    files: { 'notes.txt': 'hello\nworld\n' },
    script: {
      turns: [
        {
          text: 'Let me read it.',
          calls: [
            { name: 'write_todos', args: { todos: [{ description: 'Read notes.txt', status: 'in_progress' }, { description: 'Say what it holds', status: 'pending' }] }, id: 't1' },
            { name: 'read_file', args: { file_path: path.join(ws, 'notes.txt') }, id: 'r1' },
          ],
        },
        { text: 'The file starts with **hello** and ends with `world`.', chunks: 4 },
        { text: 'Still the same two lines.' },
      ],
    },
  }),
  async (v) => {
    // The status bar is the workbench's rendering of what the extension host set (on a
    // timer, then over RPC): it may lag the probe's "idle".
    await waitFor('the status bar, before any prompt, to show the settings (none)', async () =>
      /agentls: idle · default · default model/.test(await v.statusBar()),
    );
    let f = await v.ask('what is in notes.txt?');
    // The answer streams in as Markdown, after a tool card for the read.
    await waitFor('the answer in the chat', () =>
      f.evaluate(() => {
        const md = [...document.querySelectorAll('.item.message .markdown')].map((e) => e.innerHTML).join('\n');
        return md.includes('<strong>hello</strong>') && md.includes('<code>world</code>');
      }),
    );
    const card = await f.evaluate(() => {
      const c = [...document.querySelectorAll('.item.tool')].find((e) => e.querySelector('a.loc') && /Read/.test(e.textContent));
      return c && { status: c.dataset.status, text: c.textContent };
    });
    assert.ok(card, 'a tool card for the read');
    assert.equal(card.status, 'completed');
    assert.match(card.text, /notes\.txt/);
    // The plan, as a checklist.
    const plan = await f.evaluate(() => [...document.querySelectorAll('.item.plan li')].map((li) => `${li.className}: ${li.textContent.trim()}`));
    assert.deepEqual(plan, ['entry in_progress: Read notes.txt', 'entry pending: Say what it holds']);
    // The read's location opens the file.
    await f.evaluate(() => {
      const c = [...document.querySelectorAll('.item.tool')].find((e) => e.querySelector('a.loc') && /Read/.test(e.textContent));
      c.querySelector('a.loc').click();
    });
    await waitFor('notes.txt to open from the tool card', () => (v.probe().activeEditor || '').endsWith('/notes.txt'));
    await waitFor('the turn to end with a note', () => f.evaluate(() => /done/.test(document.querySelector('.item.note:last-child')?.textContent || '')));
    assert.equal(v.fake.turns(), 2, 'the model was asked twice (the prompt, then the read result)');
    // The status bar shows the model the server named for the session, not the settings'.
    // (It turns idle on its own path from the extension host, not the webview's: wait.)
    await waitFor('the status bar to show the session\'s model, idle', async () =>
      /agentls: idle · default · gemini-2\.5-flash/.test(await v.statusBar()),
    );
    assert.deepEqual(v.probe().agentls.model, { model: 'gemini-2.5-flash', provider: 'gemini' });
    // (The probe writes every 100 ms: what the webview shows may be newer; wait for it.)
    const session = await waitFor('the chat to know its session', () => v.probe().agentls.chat.session);

    // A new chat; then the window is reloaded (a new extension host that never showed
    // the session) and the stored session is resumed from the list: its conversation
    // comes from the server (agentls.sessionHistory).
    await v.palette('agentls: New Chat');
    await waitFor('an empty chat', () => f.evaluate(() => document.querySelectorAll('.item').length === 0));
    await v.reload();
    await v.focusWorkbench();
    await v.palette('agentls: Resume a Session…');
    await waitFor('the session in the list', () =>
      v.page.evaluate(() => {
        const row = [...document.querySelectorAll('.quick-input-list .monaco-list-row')].find((r) => r.textContent.includes('what is in notes.txt?'));
        if (row) {
          row.click();
          return true;
        }
        return false;
      }),
    );
    f = await v.chat();
    await waitFor('the resumed conversation', () =>
      f.evaluate(() => {
        const user = document.querySelector('.item.user')?.textContent || '';
        const md = [...document.querySelectorAll('.item.message .markdown')].map((e) => e.innerHTML).join('\n');
        const card = [...document.querySelectorAll('.item.tool')].find((e) => /Read/.test(e.textContent));
        const note = [...document.querySelectorAll('.item.note')].map((e) => e.textContent).join('\n');
        return /what is in notes\.txt\?/.test(user) && md.includes('<strong>hello</strong>') && card && card.dataset.status === 'completed' &&
          /Resumed session .*1 earlier prompt/.test(note);
      }),
    );
    await waitFor('the chat to be bound to the session', () => v.probe().agentls.chat.session === session);

    // A #file mention picked from the list the input offers.
    await f.click('#prompt');
    await f.type('#prompt', 'compare with #note');
    await waitFor('the file list', () => f.evaluate(() => [...document.querySelectorAll('#files .file')].some((e) => e.textContent.includes('notes.txt'))));
    await v.page.keyboard.press('Enter');
    // (Read from the webview, an iframe of its own: polled, not read once after the key.)
    let typed = '';
    try {
      await waitFor('the mention completed in the prompt box', async () => {
        typed = await f.evaluate(() => document.getElementById('prompt').value);
        return typed === 'compare with #file:notes.txt ';
      }, 5000);
    } catch (err) {
      err.message += `; the prompt box holds ${JSON.stringify(typed)}`;
      throw err;
    }
    await v.page.keyboard.press('Enter');
    await waitFor('the answer in the resumed session', () => f.evaluate(() => /Still the same two lines\./.test(document.body.textContent)));
    assert.equal(v.probe().agentls.chat.session, session, 'the prompt continued the session');
    assert.equal(v.fake.turns(), 3);
    // The mentioned file went with the prompt (the stored session holds what was sent).
    const fs = require('node:fs');
    const dir = path.join(v.tmp, 'state', 'agentls', 'sessions');
    const stored = fs.readdirSync(dir).map((n) => fs.readFileSync(path.join(dir, n), 'utf8')).join('\n');
    assert.match(stored, /Files the user mentioned/);
    assert.match(stored, /hello\\nworld/);
  },
);

// --- a custom command -------------------------------------------------------------------

scenario(
  'custom_command',
  (ws) => ({
    files: {
      'notes.txt': 'hello\n',
      // The user's Gemini CLI commands (HOME is the scenario's home, beside ws).
      '../home/.gemini/commands/git/commit.toml': 'description = "Writes a commit message"\nprompt = "Commit message for {{args}}."\n',
    },
    script: { turns: [{ text: 'Committed.' }] },
  }),
  async (v) => {
    await v.palette('agentls: Open Chat');
    const f = await v.chat();
    await f.waitForSelector('#prompt', { visible: true });
    await f.click('#prompt');
    await f.type('#prompt', '/gi');
    await waitFor('the command list', () =>
      f.evaluate(() => [...document.querySelectorAll('#files .file')].some((e) => e.textContent.includes('/git:commit') && e.textContent.includes('Writes a commit message'))),
    );
    await v.page.keyboard.press('Enter');
    await waitFor('the command completed in the prompt box', () => f.evaluate(() => document.getElementById('prompt').value === '/git:commit '));
    await f.type('#prompt', 'the parser');
    await v.page.keyboard.press('Enter');
    await waitFor('the answer', () => f.evaluate(() => /Committed\./.test(document.body.textContent)));
    // agentls expanded the command (the stored session holds what the model was sent).
    const fs = require('node:fs');
    const dir = path.join(v.tmp, 'state', 'agentls', 'sessions');
    const stored = fs.readdirSync(dir).map((n) => fs.readFileSync(path.join(dir, n), 'utf8')).join('\n');
    assert.match(stored, /Commit message for the parser\./);
  },
);

// --- edits reviewed in the diff editor -------------------------------------------------

const greet = 'hello\nworld\n';
function editSetup(answer) {
  return (ws) => ({
    files: { 'greet.txt': greet },
    script: {
      turns: [
        // The model reads the file first: agentls refuses a model's edit of a file it has not read.
        { text: 'I will change the greeting.', calls: [{ name: 'read_file', args: { file_path: path.join(ws, 'greet.txt') }, id: 'r1' }] },
        { calls: [{ name: 'replace', args: { file_path: path.join(ws, 'greet.txt'), old_string: 'hello', new_string: 'hello there' }, id: 'e1' }] },
        { text: answer },
      ],
    },
  });
}

/** Opens greet.txt, asks for the edit and waits for its diff; returns the chat frame. */
async function askForEdit(v) {
  await v.open('greet.txt');
  const f = await v.ask('make the greeting friendlier');
  await waitFor('the diff editor with the proposal', () => {
    const s = v.probe();
    const tab = s && s.tabs.find((t) => t.kind === 'diff' && t.uri && t.uri.startsWith('agentls-proposal:') && t.active);
    const prop = s && s.documents.find((d) => d.scheme === 'agentls-proposal');
    return tab && prop && prop.text === 'hello there\nworld\n';
  });
  // What the user sees: a diff editor, the question on the tool card, the status bar.
  await v.page.waitForSelector('.monaco-diff-editor', { visible: true, timeout: 10000 });
  await waitFor('the status bar to say it waits for approval', async () => /waiting for approval/.test(await v.statusBar()));
  await waitFor('the question on the tool card', () =>
    f.evaluate(() => {
      const c = document.querySelector('.item.tool[data-status="awaiting_approval"] .confirm');
      return c && /Review diff/.test(c.textContent);
    }),
  );
  assert.equal(v.doc('greet.txt').text, greet, 'nothing changes before the answer');
  // The place the call touches is marked while it waits.
  await waitFor('an agentls diagnostic on greet.txt', () =>
    v.probe().diagnostics.some((d) => d.uri.endsWith('/greet.txt') && d.source === 'agentls' && /approval/.test(d.message)),
  );
  return f;
}

function editThenAutoEdit(ws) {
  const s = editSetup('The greeting is friendlier now.')(ws);
  s.script.turns.push(
    // The user undid the first edit in the editor since: the model reads the file again.
    { calls: [{ name: 'read_file', args: { file_path: path.join(ws, 'greet.txt') }, id: 'r2' }] },
    { calls: [{ name: 'replace', args: { file_path: path.join(ws, 'greet.txt'), old_string: 'world', new_string: 'world!' }, id: 'e2' }] },
    { text: 'Applied without asking.' },
  );
  return s;
}

scenario('edit_accept_undo_then_auto_edit', editThenAutoEdit, async (v) => {
  const f = await askForEdit(v);
  await v.clickEditorAction('Accept Edit');
  await waitFor('the edit in the buffer, saved', () => {
    const d = v.doc('greet.txt');
    return d && d.text === 'hello there\nworld\n' && !d.dirty;
  });
  assert.equal(v.read('greet.txt'), 'hello there\nworld\n', 'saved after acceptance');
  await waitFor('the diff to close', () => !v.probe().tabs.some((t) => t.kind === 'diff'));
  await waitFor('the answer', () => f.evaluate(() => /friendlier now/.test(document.body.textContent)));
  await waitFor('the edit tool card to be done', () => f.evaluate(() => document.querySelector('.item.tool[data-id$="e1"]')?.dataset.status === 'completed'));
  await waitFor('the diagnostic to clear', () => !v.probe().diagnostics.some((d) => d.source === 'agentls'));
  // One Ctrl+Z in the editor reverts the whole edit.
  await v.palette('View: Focus Active Editor Group');
  await waitFor('greet.txt to be the active editor', () => (v.probe().activeEditor || '').endsWith('/greet.txt'));
  // The command runs after the palette closes: Ctrl+Z must not reach the chat first.
  await waitFor('the editor to have the keyboard focus', () => v.editorFocused());
  await v.page.keyboard.down('Control');
  await v.page.keyboard.press('z');
  await v.page.keyboard.up('Control');
  await waitFor('one undo to revert the edit', () => {
    const d = v.doc('greet.txt');
    return d && d.text === greet && d.dirty;
  });
  await waitFor('the status bar to be idle', async () => /agentls: idle/.test(await v.statusBar()));

  // In auto_edit mode (set from the palette, shown in the status bar) the next edit
  // applies without a diff.
  await v.palette('agentls: Set Approval Mode…');
  await waitFor('the mode list', () =>
    v.page.evaluate(() => {
      const row = [...document.querySelectorAll('.quick-input-list .monaco-list-row')].find((r) => r.querySelector('.label-name')?.textContent.trim() === 'auto_edit');
      if (row) {
        row.click();
        return true;
      }
      return false;
    }),
  );
  await waitFor('the status bar to show auto_edit', async () => /agentls: idle · auto_edit ·/.test(await v.statusBar()));
  await v.ask('add an exclamation mark');
  await waitFor('the answer', () => f.evaluate(() => /Applied without asking\./.test(document.body.textContent)));
  // The second edit applied to the buffer as it was (after the undo).
  await waitFor('the second edit in the buffer', () => v.doc('greet.txt').text === 'hello\nworld!\n');
  assert.ok(!v.probe().tabs.some((t) => t.kind === 'diff'), 'no diff was opened');
});

function rejectThenNewFile(ws) {
  const s = editSetup('Understood, I left the file as it was.')(ws);
  s.script.turns.push(
    { calls: [{ name: 'write_file', args: { file_path: path.join(ws, 'new.txt'), content: 'fresh\n' }, id: 'w1' }] },
    { text: 'Created new.txt.' },
  );
  return s;
}

scenario('edit_reject_by_closing_then_new_file', rejectThenNewFile, async (v) => {
  const f = await askForEdit(v);
  await v.palette('View: Close Editor');
  await waitFor('the diff to close', () => !v.probe().tabs.some((t) => t.kind === 'diff'));
  await waitFor('the model to be told and answer', () => f.evaluate(() => /left the file as it was/.test(document.body.textContent)));
  const status = await f.evaluate(() => document.querySelector('.item.tool[data-id$="e1"]')?.dataset.status);
  assert.ok(status === 'cancelled' || status === 'failed', `the refused call ends refused, not ${status}`);
  const d = v.doc('greet.txt');
  assert.equal(d.text, greet, 'the buffer did not change');
  assert.equal(d.dirty, false);
  assert.equal(v.read('greet.txt'), greet, 'the file did not change');
  assert.equal(v.fake.turns(), 3);

  // A new file: its diff says so, and the tool card's Accept button answers it.
  await v.ask('create new.txt');
  await waitFor('the diff of the new file', () => {
    const s = v.probe();
    const tab = s.tabs.find((t) => t.kind === 'diff' && t.uri && t.uri.startsWith('agentls-proposal:') && t.uri.endsWith('/new.txt'));
    return tab && /new file/.test(tab.label);
  });
  await waitFor('the Accept button on the tool card', () =>
    f.evaluate(() => {
      const b = document.querySelector('.item.tool[data-status="awaiting_approval"] button[data-choice="once"]');
      if (b) b.click();
      return !!b;
    }),
  );
  await waitFor('new.txt created and saved', () => {
    try {
      return v.read('new.txt') === 'fresh\n';
    } catch {
      return false;
    }
  });
  await waitFor('the diff to close', () => !v.probe().tabs.some((t) => t.kind === 'diff'));
  await waitFor('the answer', () => f.evaluate(() => /Created new\.txt\./.test(document.body.textContent)));
  // The probe's snapshot may predate the save by up to 100 ms: wait, bounded.
  await waitFor('nothing left unsaved', () => {
    const doc = v.doc('new.txt');
    return !doc || !doc.dirty;
  }, 5000);
});

scenario('edit_modified_proposal', editSetup('Your version is in.'), async (v) => {
  await askForEdit(v);
  // The user edits the proposal (the right side) and accepts with the keybinding.
  await v.page.click('.monaco-diff-editor .editor.modified .view-lines');
  await v.page.keyboard.down('Control');
  await v.page.keyboard.press('End');
  await v.page.keyboard.up('Control');
  await v.page.keyboard.type('added by me');
  await v.page.keyboard.press('Enter');
  await waitFor('the proposal to hold the user\'s line', () => {
    const p = v.probe().documents.find((d) => d.scheme === 'agentls-proposal');
    return p && p.text === 'hello there\nworld\nadded by me\n';
  });
  await v.page.keyboard.down('Control');
  await v.page.keyboard.press('Enter');
  await v.page.keyboard.up('Control');
  const want = 'hello there\nworld\nadded by me\n';
  await waitFor("the user's version in the buffer, saved", () => {
    const d = v.doc('greet.txt');
    return d && d.text === want && !d.dirty;
  });
  assert.equal(v.read('greet.txt'), want);
  await waitFor('the diff to close without a save question', () => !v.probe().tabs.some((t) => t.kind === 'diff'));
  const dialogs = await v.page.$$('.monaco-dialog-box');
  assert.equal(dialogs.length, 0, 'no "save changes?" dialog');
});

// --- per-hunk review (issue 23.5) -----------------------------------------------------

// 30 lines, some with a tab and trailing blanks, the last without a newline (they must
// come back byte for byte); the model capitalizes lines 2, 15 and 29: three hunks, with
// three lines of context each.
function thirty(changed = {}) {
  const out = [];
  for (let i = 1; i <= 30; i++) {
    out.push(changed[i] ?? `line ${i}${i % 7 === 0 ? '\twith a tab  ' : ''}`);
  }
  return out.join('\n');
}

function hunksSetup(ws) {
  const file = path.join(ws, 'f.txt');
  return {
    files: { 'f.txt': thirty() },
    record: true,
    script: {
      turns: [
        { text: 'Reading it first.', calls: [{ name: 'read_file', args: { file_path: file }, id: 'r1' }] },
        { calls: [{ name: 'write_file', args: { file_path: file, content: thirty({ 2: 'LINE 2', 15: 'LINE 15', 29: 'LINE 29' }) }, id: 'w1' }] },
        { text: 'Noted which hunks you took.' },
      ],
    },
  };
}

/** Moves the cursor of the focused editor to line (1-based) with Go to Line. */
async function goToLine(v, line) {
  await v.page.keyboard.down('Control');
  await v.page.keyboard.press('g');
  await v.page.keyboard.up('Control');
  await v.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 10000 });
  await v.page.keyboard.type(String(line));
  await v.page.keyboard.press('Enter');
  await waitFor('the quick input to close', () => v.page.evaluate(() => {
    const w = document.querySelector('.quick-input-widget');
    return !w || w.style.display === 'none' || !w.offsetParent;
  }));
  await waitFor('the editor to have the keyboard focus again', () => v.editorFocused());
}

/** The summary of the hunk answers of the edit waiting (the extension's state). */
function hunkState(v) {
  const s = v.probe();
  const c = s && s.agentls && s.agentls.confirmations.find((x) => x.type === 'edit');
  return c && c.hunks;
}

scenario('edit_hunks_taken_in_part', hunksSetup, async (v) => {
  await v.open('f.txt');
  const f = await v.ask('capitalize three lines');
  const proposed = thirty({ 2: 'LINE 2', 15: 'LINE 15', 29: 'LINE 29' });
  await waitFor('the diff editor with the proposal', () => {
    const p = v.probe().documents.find((d) => d.scheme === 'agentls-proposal');
    return p && p.text === proposed;
  });
  await v.page.waitForSelector('.monaco-diff-editor', { visible: true, timeout: 10000 });
  await waitFor('three hunks to decide', () => hunkState(v) === 'hunks 1? 2? 3? · Accept applies all');
  // Each hunk carries its mark on the proposal (the decoration's text is a CSS rule).
  await waitFor('the marks of the hunks', () =>
    v.page.evaluate(() => [...document.styleSheets].some((ss) => {
      try {
        return [...ss.cssRules].some((r) => /hunk 3 of 3 · Alt\+Y accept · Alt\+N reject/.test(r.cssText));
      } catch {
        return false;
      }
    })),
  );

  // Hunk 1 by its key, in the proposal.
  await v.page.click('.monaco-diff-editor .editor.modified .view-lines');
  await waitFor('the proposal to have the keyboard focus', () => v.editorFocused());
  await goToLine(v, 2);
  await v.page.keyboard.down('Alt');
  await v.page.keyboard.press('y');
  await v.page.keyboard.up('Alt');
  await waitFor('hunk 1 accepted', () => hunkState(v) === 'hunks 1✓ 2? 3? · Accept applies all');

  // Hunk 2 (the cursor moved on to it) through the light bulb's code actions.
  await v.page.keyboard.down('Control');
  await v.page.keyboard.press('.');
  await v.page.keyboard.up('Control');
  const row = await waitFor('"Reject This Hunk (2 of 3)" among the code actions', () =>
    v.page.evaluate(() => {
      const r = [...document.querySelectorAll('.action-widget .monaco-list-row')].find((e) => e.textContent.includes('Reject This Hunk (2 of 3)'));
      if (!r) return null;
      const b = r.getBoundingClientRect();
      return { x: b.x + b.width / 2, y: b.y + b.height / 2, all: [...document.querySelectorAll('.action-widget .monaco-list-row')].map((e) => e.textContent) };
    }),
  );
  assert.ok(row.all.some((t) => t.includes('Accept This Hunk (2 of 3)')), `both answers offered: ${JSON.stringify(row.all)}`);
  await v.page.mouse.click(row.x, row.y);
  await waitFor('hunk 2 rejected', () => hunkState(v) === 'hunks 1✓ 2✗ 3? · Accept applies 2 of 3');
  assert.equal(v.doc('f.txt').text, thirty(), 'nothing applied before the answer');

  // Hunk 3 is left undecided: Accept Edit takes every hunk not rejected.
  await v.clickEditorAction('Accept Edit');
  const want = thirty({ 2: 'LINE 2', 29: 'LINE 29' });
  await waitFor('hunks 1 and 3 in the buffer, saved', () => {
    const d = v.doc('f.txt');
    return d && d.text === want && !d.dirty;
  });
  assert.equal(v.read('f.txt'), want, 'on disk, every other byte as it was');
  await waitFor('the diff to close', () => !v.probe().tabs.some((t) => t.kind === 'diff'));
  await waitFor('the answer', () => f.evaluate(() => /Noted which hunks you took\./.test(document.body.textContent)));
  const bodies = v.tap.generateBodies();
  assert.equal(bodies.length, 3, 'three model requests');
  assert.match(
    JSON.stringify(bodies[2]),
    /The user accepted hunks 1 and 3 of 3; hunk 2 was not applied: @@ -12,7 \+12,7 @@/,
    'the model is told which hunks were taken',
  );
});

function alwaysThenStale(ws) {
  const file = path.join(ws, 'greet.txt');
  return {
    files: { 'greet.txt': greet },
    script: {
      turns: [
        // The model reads the file first: agentls refuses a model's edit of a file it has not read.
        { text: 'I will change the greeting.', calls: [{ name: 'read_file', args: { file_path: file }, id: 'r1' }] },
        { calls: [{ name: 'replace', args: { file_path: file, old_string: 'hello', new_string: 'hello there' }, id: 'e1' }] },
        { calls: [{ name: 'replace', args: { file_path: file, old_string: 'world', new_string: 'world!' }, id: 'e2' }] },
        { text: 'Both edits are in.' },
        // A new chat: a new session, which reads the file again.
        { calls: [{ name: 'read_file', args: { file_path: file }, id: 'r3' }] },
        { calls: [{ name: 'replace', args: { file_path: file, old_string: 'world!', new_string: 'world!!' }, id: 'e3' }] },
        { text: 'The file changed while you reviewed; I left it as you have it.' },
      ],
    },
  };
}

scenario('edit_always_for_session_then_stale', alwaysThenStale, async (v) => {
  const f = await askForEdit(v);
  // The diff editor's title offers the server's other answers (More Answers…): its
  // labels, exactly, in its order.
  await v.clickEditorAction('More Answers to the Edit…');
  const pick = await waitFor('the server\'s answers in the quick input', () => pickLabels(v, /greet\.txt/));
  assert.deepEqual(pick, [
    'Allow once',
    'Allow every edit for this session',
    'Always allow replace, and save it in your settings',
    'Reject',
    'Always reject replace for this session',
  ]);
  // The same answers on the tool card.
  const cardChoices = await f.evaluate(() =>
    [...document.querySelectorAll('.item.tool[data-status="awaiting_approval"] .choices button[data-choice]')].map((b) => b.textContent),
  );
  assert.deepEqual(cardChoices, pick);
  await pickRow(v, 'Allow every edit for this session');
  // The session's next edit applies without a question; the approval mode stays.
  await waitFor('the second edit to apply without a question', () => {
    const d = v.doc('greet.txt');
    return d && d.text === 'hello there\nworld!\n' && !d.dirty;
  });
  await waitFor('the answer', () => f.evaluate(() => /Both edits are in\./.test(document.body.textContent)));
  assert.equal(v.probe().agentls.asked, 1, 'asked once: the second edit ran without a question');
  // The first edit's diff closes after its answer went (Confirmations.takeDown, not
  // awaited); the second opened none (asked once, above).
  await waitFor('no diff to be open', () => !v.probe().tabs.some((t) => t.kind === 'diff'), 5000);
  assert.equal(v.read('greet.txt'), 'hello there\nworld!\n');
  await waitFor('the status bar to show the mode unchanged', async () => /agentls: idle · default ·/.test(await v.statusBar()));
  const announced = await v.page.evaluate(() => [...document.querySelectorAll('.notification-toast')].some((t) => /approval mode is now/.test(t.textContent)));
  assert.ok(!announced, 'no change of approval mode');

  // A new chat is a new session: its edit asks again. While its diff is open the user
  // types in the file. The accepted edit no longer fits the buffer: it is refused as
  // stale, and the user's typing stays.
  await v.palette('agentls: New Chat');
  await waitFor('an empty chat', () => f.evaluate(() => document.querySelectorAll('.item').length === 0));
  await v.ask('one more exclamation mark');
  await waitFor('the diff of the third edit', () => {
    const p = v.probe().documents.find((d) => d.scheme === 'agentls-proposal');
    return p && p.text === 'hello there\nworld!!\n';
  });
  assert.equal(v.probe().agentls.asked, 2, 'the new session asks');
  // (Escape, which quick open starts with, cancels the prompt when the chat's input has
  // the focus: the workbench gets it first.)
  await v.focusWorkbench();
  await v.open('greet.txt');
  await v.page.keyboard.down('Control');
  await v.page.keyboard.press('Home');
  await v.page.keyboard.up('Control');
  await v.page.keyboard.type('typed by me ');
  const mine = 'typed by me hello there\nworld!\n';
  await waitFor('the user\'s typing in the buffer', () => {
    const d = v.doc('greet.txt');
    return d && d.text === mine && d.dirty;
  });
  assert.ok(v.probe().tabs.some((t) => t.kind === 'diff'), 'the proposal is still open');
  // Accepted from the tool card.
  await waitFor('the Accept button on the tool card', () =>
    f.evaluate(() => {
      const b = document.querySelector('.item.tool[data-status="awaiting_approval"] button[data-choice="once"]');
      if (b) b.click();
      return !!b;
    }),
  );
  await waitFor('the answer', () => f.evaluate(() => /I left it as you have it\./.test(document.body.textContent)));
  const card = await f.evaluate(() => {
    const cards = [...document.querySelectorAll('.item.tool')];
    const c = cards[cards.length - 1];
    return { status: c.dataset.status, text: c.textContent };
  });
  assert.equal(card.status, 'failed', `the stale edit fails: ${card.text}`);
  assert.match(card.text, /changed/, 'the card says why');
  const d = v.doc('greet.txt');
  assert.equal(d.text, mine, 'the buffer keeps the user\'s typing, without the agent\'s edit');
  assert.equal(v.read('greet.txt'), 'hello there\nworld!\n', 'nothing was written');
  await waitFor('the diff to close', () => !v.probe().tabs.some((t) => t.kind === 'diff'));
  assert.equal(v.probe().agentls.asked, 2);
});

// --- folder trust and an MCP server ---------------------------------------------------

scenario(
  'untrusted_folder_trust_then_mcp',
  () => ({
    files: {
      // The workspace names an MCP server: agentls starts none of it until the folder is trusted.
      '.agentls/settings.json': JSON.stringify({ mcpServers: { everything: { command: 'node', args: [need('MCP_EVERYTHING'), 'stdio'] } } }),
    },
    script: {
      turns: [
        { calls: [{ name: 'everything__echo', args: { message: 'hello from VS Code' }, id: 'm1' }] },
        { text: 'The MCP server echoed it.' },
        { calls: [{ name: 'everything__trigger-elicitation-request', args: {}, id: 'm2' }] },
        { text: 'Thanks for filling in the form.' },
      ],
    },
  }),
  async (v) => {
    // What the user sees: the server's question, naming what it ignores.
    await waitFor('the trust question', () =>
      v.page.evaluate(() =>
        [...document.querySelectorAll('.notification-toast')].some((t) => /trust/i.test(t.textContent) && t.textContent.includes('mcpServers.everything')),
      ),
    );
    await v.clickNotification('mcpServers.everything', 'Not now');
    await waitFor('the question to go', () =>
      v.page.evaluate(() => ![...document.querySelectorAll('.notification-toast')].some((t) => t.textContent.includes('mcpServers.everything'))),
    );
    assert.equal(processesWith(need('MCP_EVERYTHING')).length, 0, 'no MCP server runs in an untrusted folder');
    assert.deepEqual(v.probe().agentls.mcp, [], 'none announced');
    // Trusting it later, from the palette.
    await v.palette('agentls: Trust This Folder…');
    await waitFor('the trust choices', () =>
      v.page.evaluate(() => {
        const row = [...document.querySelectorAll('.quick-input-list .monaco-list-row')].find((r) => r.querySelector('.label-name')?.textContent.trim() === 'Trust this folder');
        if (row) {
          row.click();
          return true;
        }
        return false;
      }),
    );
    await waitFor('the MCP server connected, with its tools', () =>
      v.probe().agentls.mcp.some((m) => m.name === 'everything' && m.state === 'connected' && m.tools > 0),
    30000);
    assert.ok(processesWith(need('MCP_EVERYTHING')).length > 0, 'the MCP server runs');

    // The model calls the server's tool; the call asks (type mcp) and its result shows
    // in the chat.
    const f = await v.ask('echo something through MCP');
    await v.clickNotification('echo', 'Allow once');
    await waitFor('the MCP result in the tool card', () =>
      f.evaluate(() => {
        const c = [...document.querySelectorAll('.item.tool')].find((e) => /echo/.test(e.textContent));
        return c && c.dataset.status === 'completed' && c.textContent.includes('Echo: hello from VS Code');
      }),
    );
    await waitFor('the answer', () => f.evaluate(() => /The MCP server echoed it\./.test(document.body.textContent)));

    // The server's form (elicitation/create) comes as ask_user questions in the quick
    // input, one a field: the name typed, every other field left to its default or the
    // first choice with Enter.
    await v.ask('fill in the form');
    await v.clickNotification('trigger-elicitation-request', 'Allow once');
    const first = await waitFor('the form\'s first question', async () => {
      const q = await quickInput(v);
      return q && /MCP server everything asks: Please provide inputs/.test(q.title) && /\(1\/\d+\)/.test(q.title) ? q : null;
    });
    const total = Number(/\(1\/(\d+)\)/.exec(first.title)[1]);
    assert.ok(total >= 10, `a question a field: ${first.title}`);
    let named = false;
    for (let k = 1; k <= total; k++) {
      const q = await waitFor(`question ${k} of ${total}`, async () => {
        const q = await quickInput(v);
        return q && q.title.includes(`(${k}/${total})`) ? q : null;
      });
      if (/^name: String: Your full, legal name/.test(q.message)) {
        await v.page.keyboard.type('Ada');
        named = true;
      }
      await v.page.keyboard.press('Enter');
    }
    assert.ok(named, 'the name was asked');
    await waitFor('the form\'s answers in the MCP result', () =>
      f.evaluate(() => {
        const c = document.querySelector('.item.tool[data-id$="m2"]');
        return c && c.dataset.status === 'completed' && c.textContent.includes('- Name: Ada') && c.textContent.includes('- Favorite Integer: 42');
      }),
    );
    await waitFor('the answer', () => f.evaluate(() => /Thanks for filling in the form\./.test(document.body.textContent)));
  },
);

// --- the model asks the user (ask_user) -------------------------------------------------

const askQuestions = [
  { question: 'Name the table', header: 'Table', type: 'text', placeholder: 'e.g. users' },
  {
    question: 'Which database?',
    header: 'DB',
    type: 'choice',
    options: [
      { label: 'Postgres', description: 'the server' },
      { label: 'SQLite', description: 'a file' },
    ],
  },
];

/** What the quick input shows: title, message, the input's placeholder, the rows. */
function quickInput(v) {
  return v.page.evaluate(() => {
    const w = document.querySelector('.quick-input-widget');
    if (!w || w.style.display === 'none' || !w.offsetParent) return null;
    const input = w.querySelector('.quick-input-box input');
    return {
      title: w.querySelector('.quick-input-title')?.textContent || '',
      message: w.querySelector('.quick-input-message')?.textContent || '',
      placeholder: (input && (input.getAttribute('placeholder') || input.getAttribute('aria-label'))) || '',
      rows: [...w.querySelectorAll('.quick-input-list .monaco-list-row')].map((r) => r.textContent.trim()),
    };
  });
}

/**
 * The latest ask_user function response in the last model call (which carries the
 * whole conversation), and how many there are in it.
 */
function askResponse(v) {
  const bodies = v.tap.generateBodies();
  const found = [];
  for (const c of (bodies.length > 0 && bodies[bodies.length - 1].contents) || []) {
    for (const p of c.parts || []) {
      if (p.functionResponse && p.functionResponse.name === 'ask_user') found.push(p.functionResponse.response);
    }
  }
  return found.length > 0 ? { count: found.length, response: found[found.length - 1] } : null;
}

scenario(
  'ask_user_quick_input',
  () => ({
    record: true,
    script: {
      turns: [
        { calls: [{ name: 'ask_user', args: { questions: askQuestions }, id: 'q1' }] },
        { text: 'Thanks for the answers.' },
        { calls: [{ name: 'ask_user', args: { questions: [askQuestions[1]] }, id: 'q2' }] },
        { text: 'Understood, no answer.' },
      ],
    },
  }),
  async (v) => {
    const f = await v.ask('set up the database');
    // The free-text question in an input box: the question, its header and placeholder in view.
    await waitFor('the first question in an input box', async () => {
      const q = await quickInput(v);
      return q && /Ask User \(1\/2\)/.test(q.title) && q.message.includes('Table: Name the table') && q.placeholder.includes('e.g. users') && q.rows.length === 0;
    });
    // Meanwhile the chat's card lists the questions.
    await waitFor('the questions on the tool card', () =>
      f.evaluate(() => {
        const c = document.querySelector('.item.tool[data-status="awaiting_approval"]');
        const qs = c && c.querySelector('.questions');
        return qs && qs.textContent.includes('Table: Name the table') && qs.textContent.includes('DB: Which database?');
      }),
    );
    await v.page.keyboard.type('accounts');
    await v.page.keyboard.press('Enter');
    // The choice in a quick pick, its options with their descriptions.
    await waitFor('the choice in a quick pick', async () => {
      const q = await quickInput(v);
      return q && /Ask User \(2\/2\)/.test(q.title) && q.placeholder.includes('DB: Which database?') &&
        q.rows.some((r) => r.includes('SQLite') && r.includes('a file')) && q.rows.some((r) => r.includes('Postgres'));
    });
    await waitFor('SQLite to be picked', () =>
      v.page.evaluate(() => {
        const row = [...document.querySelectorAll('.quick-input-list .monaco-list-row')].find((r) => r.querySelector('.label-name')?.textContent.trim() === 'SQLite');
        if (row) {
          row.click();
          return true;
        }
        return false;
      }),
    );
    await waitFor('the answer', () => f.evaluate(() => /Thanks for the answers\./.test(document.body.textContent)));
    // The model's next request carries the answers, by question index.
    const sent = askResponse(v);
    assert.ok(sent, 'an ask_user function response went to the model');
    const text = JSON.stringify(sent.response);
    assert.match(text, /\\"0\\":\\"accounts\\"/, `the typed answer: ${text}`);
    assert.match(text, /\\"1\\":\\"SQLite\\"/, `the picked answer: ${text}`);
    // The card shows the answers.
    await waitFor('the answers on the tool card', () =>
      f.evaluate(() => {
        const c = document.querySelector('.item.tool[data-id$="q1"]');
        const a = c && c.querySelector('.answers');
        return c.dataset.status === 'completed' && a && /Table → accounts/.test(a.textContent) && /DB → SQLite/.test(a.textContent);
      }),
    );

    // Asked again, dismissed with Escape: the model is told.
    await v.ask('ask me again');
    await waitFor('the second question', async () => {
      const q = await quickInput(v);
      return q && q.placeholder.includes('DB: Which database?') && q.rows.length === 2;
    });
    await v.page.keyboard.press('Escape');
    await waitFor('the answer after the dismissal', () => f.evaluate(() => /Understood, no answer\./.test(document.body.textContent)));
    const last = askResponse(v);
    assert.ok(last && last.count === 2, 'a second ask_user response');
    assert.match(JSON.stringify(last.response), /dismissed/, `the model is told the questions were dismissed: ${JSON.stringify(last.response)}`);
    assert.doesNotMatch(JSON.stringify(last.response), /SQLite/, 'nothing answered for the user');
    const card = await f.evaluate(() => {
      const c = document.querySelector('.item.tool[data-id$="q2"]');
      return c && { status: c.dataset.status, text: c.textContent };
    });
    assert.ok(card && (card.status === 'cancelled' || card.status === 'failed'), `the dismissed call ends so: ${JSON.stringify(card)}`);
    assert.match(card.text, /dismissed/);
    await waitFor('the quick input to be gone', async () => !(await quickInput(v)), 5000);
  },
);

// --- shell commands -------------------------------------------------------------------

scenario(
  'shell_streams_output',
  () => ({
    script: {
      turns: [
        // The command waits after its first line until the test has looked (it creates
        // "release"): "while it runs" must not depend on how fast a loaded machine is.
        { calls: [{ name: 'run_shell_command', args: { command: "printf 'line-1\\n'; until test -e release; do sleep 0.1; done; printf 'line-2\\n'; sleep 1.5; printf 'line-3\\n'", description: 'count to three' }, id: 's1' }] },
        { text: 'Counted to three.' },
      ],
    },
  }),
  async (v) => {
    const f = await v.ask('count to three slowly');
    // The question names the command; its buttons are the server's Allow once and
    // Reject, and More… (five long labels would be cut short in a toast), which lists
    // the server's choices, saying what "always" would allow. Escape goes back.
    const buttons = await waitFor('the shell question', () => notificationButtons(v, "Run `printf 'line-1"));
    assert.deepEqual(buttons, ['Allow once', 'Reject', 'More…']);
    await v.clickNotification("Run `printf 'line-1", 'More…');
    const all = await waitFor('the choices in a pick', () => pickLabels(v, /Run `printf 'line-1/));
    assert.deepEqual(all, [
      'Allow once',
      'Always allow printf, test, sleep for this session',
      'Always allow printf, test, sleep, and save it in your settings',
      'Reject',
      'Always reject printf, test, sleep for this session',
    ]);
    await v.page.keyboard.press('Escape');
    await waitFor('the question again', () => notificationButtons(v, "Run `printf 'line-1"));
    await v.clickNotification('Run `printf', 'Allow once');
    // Output streams into the tool card while the command runs.
    await waitFor('line-1 in the tool card while the command runs', () =>
      f.evaluate(() => {
        const c = document.querySelector('.item.tool');
        const out = c && c.querySelector('pre.out');
        return c && c.dataset.status === 'in_progress' && out && out.textContent.includes('line-1') && !out.textContent.includes('line-3');
      }),
    );
    // (The status bar is updated on its own path from the extension host, not the
    // webview's: wait for it, while the command still runs.)
    await waitFor('the status bar to say working while the command runs', async () =>
      /agentls: working/.test(await v.statusBar()) &&
      (await f.evaluate(() => document.querySelector('.item.tool')?.dataset.status === 'in_progress')),
    );
    require('node:fs').writeFileSync(path.join(v.ws, 'release'), '');
    await waitFor('the command to finish with all its output', () =>
      f.evaluate(() => {
        const c = document.querySelector('.item.tool');
        return c && c.dataset.status === 'completed' && /line-1\s+line-2\s+line-3/.test(c.querySelector('pre.out').textContent);
      }),
    );
    await waitFor('the answer', () => f.evaluate(() => /Counted to three\./.test(document.body.textContent)));
    // The status bar's tooltip says how the server contains shell commands (this
    // machine has Landlock and user namespaces; the suite requires them).
    const tip = await v.statusTooltip();
    assert.match(tip, /Shell commands: contained \(landlock\+namespaces, network off\)/);
    assert.doesNotMatch(await v.statusBar(), /not contained/);
    // The same output in a terminal, on request.
    await v.palette('agentls: Show Tool Output in a Terminal');
    let seen = '';
    try {
      await waitFor('the output in the agentls terminal', async () => {
        seen = await v.page.evaluate(() =>
          [...document.querySelectorAll('.xterm-rows, .xterm-accessibility-tree')].map((e) => e.textContent).join('\n'),
        );
        return /line-1/.test(seen) && /line-3/.test(seen) && /completed/.test(seen);
      });
    } catch (err) {
      err.message += `; the terminal shows: ${JSON.stringify(seen.slice(0, 400))}`;
      throw err;
    }
  },
);

const loopLine = 'n=0; while test $n -lt 3; do echo $n; sleep 1; n=$((n+1)); done';

scenario(
  'shell_reject_always',
  () => ({
    script: {
      turns: [
        { calls: [{ name: 'run_shell_command', args: { command: loopLine, description: 'count' }, id: 'l1' }] },
        { text: 'I will not count then.' },
        { calls: [{ name: 'run_shell_command', args: { command: 'echo first', description: 'say first' }, id: 'x1' }] },
        { text: 'Understood, no echo.' },
        { calls: [{ name: 'run_shell_command', args: { command: 'echo second', description: 'say second' }, id: 'x2' }] },
        { text: 'The echo was refused again.' },
        // A new chat: another session.
        { calls: [{ name: 'run_shell_command', args: { command: 'echo third', description: 'say third' }, id: 'x3' }] },
        { text: 'Said third.' },
      ],
    },
  }),
  async (v) => {
    // Issue 21: the loop's question offered "Always allow echo, n=0, test, sleep,
    // n=$((n+1))", which no "always" can hold. The server offers none; the buttons and
    // More… are its choices, and the question says why there is no "always".
    const f = await v.ask('count to three');
    const loopButtons = await waitFor('the loop\'s question', () => notificationButtons(v, 'Run `n=0; while'));
    assert.deepEqual(loopButtons, ['Allow once', 'Reject', 'More…']);
    assert.ok(
      await v.page.evaluate(() => [...document.querySelectorAll('.notification-toast')].some((t) => t.textContent.includes('Run `n=0; while') && /asked every time/.test(t.textContent))),
      'the question says it is asked every time',
    );
    await v.clickNotification('Run `n=0; while', 'More…');
    const loop = await waitFor('the loop\'s choices in a pick', () => pickLabels(v, /Run `n=0; while/));
    assert.deepEqual(loop, ['Allow once', 'Reject', 'Always reject n=0, test, echo, sleep, n=$((n+1)) for this session']);
    assert.ok(!loop.some((b) => /^Always allow/.test(b)), `no "Always allow": ${loop}`);
    // Escape goes back to the question.
    await v.page.keyboard.press('Escape');
    await v.clickNotification('Run `n=0; while', 'Reject');
    await waitFor('the answer after the refusal', () => f.evaluate(() => /I will not count then\./.test(document.body.textContent)));

    // echo: the server's five answers; "Always reject echo for this session".
    await v.ask('say first');
    assert.deepEqual(await waitFor('the echo question', () => notificationButtons(v, 'Run `echo first')), ['Allow once', 'Reject', 'More…']);
    await v.clickNotification('Run `echo first', 'More…');
    const echo = await waitFor('the echo\'s choices in a pick', () => pickLabels(v, /Run `echo first/));
    assert.deepEqual(echo, [
      'Allow once',
      'Always allow echo for this session',
      'Always allow echo, and save it in your settings',
      'Reject',
      'Always reject echo for this session',
    ]);
    await pickRow(v, 'Always reject echo for this session');
    await waitFor('the answer after the refusal', () => f.evaluate(() => /Understood, no echo\./.test(document.body.textContent)));
    assert.equal(v.probe().agentls.asked, 2);

    // A later echo of the same session is refused without a question.
    await v.ask('say second');
    await waitFor('the answer after the second refusal', () => f.evaluate(() => /The echo was refused again\./.test(document.body.textContent)));
    const second = await f.evaluate(() => {
      const c = document.querySelector('.item.tool[data-id$="x2"]');
      return c && { status: c.dataset.status, text: c.textContent };
    });
    assert.ok(second && (second.status === 'cancelled' || second.status === 'failed'), `the second echo is refused: ${JSON.stringify(second)}`);
    assert.equal(v.probe().agentls.asked, 2, 'not asked');
    assert.equal(await notificationButtons(v, 'Run `echo second'), null, 'no notification for the second echo');

    // Another session is not bound by it: its echo asks, and runs.
    await v.palette('agentls: New Chat');
    await waitFor('an empty chat', () => f.evaluate(() => document.querySelectorAll('.item').length === 0));
    await v.ask('say third');
    await v.clickNotification('Run `echo third', 'Allow once');
    await waitFor('the third echo to run', () =>
      f.evaluate(() => {
        const c = document.querySelector('.item.tool[data-id$="x3"]');
        return c && c.dataset.status === 'completed' && /third/.test(c.querySelector('pre.out')?.textContent || '');
      }),
    );
    assert.equal(v.probe().agentls.asked, 3);
  },
);

scenario(
  'sandbox_not_contained',
  () => ({
    // What a machine without Landlock and user namespaces reports, forced.
    settings: { 'agentls.env': { AGENTLS_SANDBOX_MACHINE: 'none' } },
    script: { turns: [] },
  }),
  async (v) => {
    await waitFor('the status bar to say that commands are not contained', async () =>
      /agentls: idle · default · default model ·\s*not contained$/.test(await v.statusBar()),
    );
    const tip = await v.statusTooltip();
    assert.match(tip, /Shell commands: not contained: Landlock: turned off by AGENTLS_SANDBOX_MACHINE=none; user namespaces: turned off by AGENTLS_SANDBOX_MACHINE=none/);
    assert.equal(v.probe().agentls.sandbox.contained, false);
  },
);

// The long command of shell_cancel, told apart from the same scenario's in another
// run on the machine (another checkout's suite): the test looks for it by its command line.
const longSleep = `sleep 47.${process.pid}${Date.now() % 1000}`;

scenario(
  'shell_cancel',
  () => ({
    script: {
      turns: [
        { calls: [{ name: 'run_shell_command', args: { command: `echo started; ${longSleep}`, description: 'wait a long time' }, id: 'c1' }] },
        { text: 'This turn must not be reached.' },
      ],
    },
  }),
  async (v) => {
    const f = await v.ask('wait for a long time');
    await v.clickNotification('Run `echo started', 'Allow once');
    await waitFor('the command to run', () =>
      f.evaluate(() => {
        const c = document.querySelector('.item.tool');
        return c && c.dataset.status === 'in_progress' && /started/.test(c.textContent);
      }),
    );
    assert.ok(processesWith(longSleep).length > 0, 'the sleep runs');
    await f.click('#cancel');
    await waitFor('the tool card to say cancelled', () => f.evaluate(() => document.querySelector('.item.tool')?.dataset.status === 'cancelled'));
    await waitFor('the prompt to end cancelled', () =>
      f.evaluate(() => {
        const notes = [...document.querySelectorAll('.item.note')];
        return notes.length > 0 && /cancelled/.test(notes[notes.length - 1].textContent) && !document.body.classList.contains('running');
      }),
    );
    await waitFor('no process left', () => processesWith(longSleep).length === 0, 5000);
    await waitFor('the status bar to be idle', async () => /agentls: idle/.test(await v.statusBar()));
    assert.equal(v.fake.turns(), 1, 'the model was not asked again');
  },
);

// --- a problem, and "Ask agentls to fix this" ----------------------------------------

scenario(
  'fix_this_code_action',
  () => ({
    files: { 'greet.txt': greet },
    script: {
      turns: [
        { calls: [{ name: 'run_shell_command', args: { command: "echo 'greet.txt:1:1: error: greeting too short'", description: 'check the greeting' }, id: 'k1' }] },
        { text: 'The check found a problem.' },
        { text: 'I would make the greeting longer.' },
      ],
    },
  }),
  async (v) => {
    await v.open('greet.txt');
    const f = await v.ask('check the greeting');
    await v.clickNotification('Run `echo', 'Allow once');
    await waitFor('the answer', () => f.evaluate(() => /found a problem/.test(document.body.textContent)));
    // The compiler-style line became a problem on greet.txt.
    await waitFor('the problem on greet.txt', () =>
      v.probe().diagnostics.some((d) => d.uri.endsWith('/greet.txt') && d.source === 'agentls/shell' && d.message.includes('greeting too short') && d.line === 0),
    );
    const first = await waitFor('the chat to know its session', () => v.probe().agentls.chat.session);
    await v.palette('View: Focus Active Editor Group');
    // The command runs after the palette closes: Ctrl+. must not reach the chat first.
    await waitFor('the editor to have the keyboard focus', () => v.editorFocused());
    await v.page.keyboard.down('Control');
    await v.page.keyboard.press('Home');
    await v.page.keyboard.press('.');
    await v.page.keyboard.up('Control');
    await waitFor('the quick fix "Ask agentls to fix this"', () =>
      v.page.evaluate(() => {
        const row = [...document.querySelectorAll('.action-widget .monaco-list-row')].find((r) => r.textContent.includes('Ask agentls to fix this'));
        if (row) {
          row.click();
          return true;
        }
        return false;
      }),
    );
    // A new conversation in the chat, about the problem, answered.
    await waitFor('the fix prompt in the chat', () =>
      f.evaluate(() => {
        const u = document.querySelector('.item.user');
        return u && /greeting too short/.test(u.textContent) && /greet\.txt/.test(u.textContent);
      }),
    );
    await waitFor('the answer to it', () => f.evaluate(() => /make the greeting longer/.test(document.body.textContent)));
    await waitFor('the fix to run in a new session', () => {
      const s = v.probe().agentls.chat.session;
      return s && s !== first;
    });
    assert.equal(v.fake.turns(), 3);
  },
);

// --- the editor's diagnostics (issue 24): VS Code's built-in TypeScript ---------------

// A hint (an unused variable) tells that TypeScript has looked at the file.
const mainTs = 'function f(): number {\n  const unused = 0;\n  return 1;\n}\nlet n: number = f();\nconsole.log(n);\n';
const tsError = "Type 'string' is not assignable to type 'number'.";

function diagnosticsSetup(extraTurns, settings = {}) {
  return (ws) => ({
    files: { 'main.ts': mainTs },
    record: true,
    settings: { 'agentls.approvalMode': 'yolo', ...settings },
    script: {
      turns: [
        { calls: [{ name: 'read_file', args: { file_path: path.join(ws, 'main.ts') }, id: 'r1' }] },
        { calls: [{ name: 'replace', args: { file_path: path.join(ws, 'main.ts'), old_string: 'let n: number = f();', new_string: 'let n: number = "x";' }, id: 'e1' }] },
        ...extraTurns(ws),
        { text: 'Done.' },
      ],
    },
  });
}

async function typescriptReady(v) {
  await v.open('main.ts');
  await waitFor('TypeScript to look at main.ts', () => v.probe().diagnostics.some((d) => d.uri.endsWith('/main.ts') && d.source === 'ts'), 60000);
}

scenario(
  'diagnostics_typescript',
  // TypeScript reports syntactic, then semantic diagnostics; on a loaded machine the
  // second pass can come more than the default 200 ms after the first.
  diagnosticsSetup((ws) => [
    { calls: [{ name: 'replace', args: { file_path: path.join(ws, 'main.ts'), old_string: 'let n: number = "x";', new_string: 'let n: number = 2;' }, id: 'e2' }] },
  ], { 'agentls.diagnostics.waitMs': 8000, 'agentls.diagnostics.quietMs': 2000 }),
  async (v) => {
    await typescriptReady(v);
    await v.ask('break it, then fix it');
    const bodies = await waitFor('four model requests', () => {
      const b = v.tap.generateBodies();
      return b.length === 4 ? b.map((x) => JSON.stringify(x)) : null;
    }, 60000);
    assert.ok(!bodies[1].includes(tsError), 'no error before the edit');
    assert.ok(bodies[2].includes(`main.ts:5: error: ${tsError.replace(/'/g, "\\'")}`) || bodies[2].includes(`main.ts:5: error: ${tsError}`), `TypeScript's message for line 5 in the request after the edit: ${bodies[2].slice(-1500)}`);
    assert.ok(bodies[2].includes('1 new error(s)'), 'one new error');
    assert.ok(!bodies[2].includes('is declared but its value is never read'), 'the hint is not reported');
    assert.ok(bodies[3].includes('reported before this change are resolved'), `resolved after the fix: ${bodies[3].slice(-1500)}`);
    await waitFor('the fix saved', () => v.read('main.ts').includes('let n: number = 2;'));
  },
);

scenario(
  'diagnostics_off',
  // Not saved after the edit: saving a .ts file in code-server takes a second or two on a
  // loaded machine, which would hide what this measures.
  diagnosticsSetup(() => [], { 'agentls.diagnostics.enabled': false, 'agentls.saveAfterEdit': false }),
  async (v) => {
    await typescriptReady(v);
    await v.ask('break it');
    const bodies = await waitFor('three model requests', () => {
      const b = v.tap.generateBodies();
      return b.length === 3 ? b.map((x) => JSON.stringify(x)) : null;
    }, 60000);
    // From the request that asks for the edit to the one that carries its result.
    const times = v.tap.generateTimes();
    const took = times[2] - times[1];
    assert.ok(!bodies[2].includes(tsError) && !bodies[2].includes("editor's diagnostics"), 'nothing said of diagnostics');
    assert.ok(took < 1500, `the edit's turn took ${took} ms: something waited`);
  },
);

// The figures of BENCHMARKS.md for the editor's diagnostics (bench/diagnostics.sh; by
// name only): AGENTLS_BENCH_EDITS edits alternately break and fix main.ts; the server's
// log lines of each edit (settledMs) are appended to AGENTLS_BENCH_LOG.
const benchEdits = Number(process.env.AGENTLS_BENCH_EDITS || 20);
scenario(
  'bench_diagnostics',
  diagnosticsSetup((ws) =>
    Array.from({ length: benchEdits - 1 }, (_, i) => ({
      calls: [{
        name: 'replace',
        args: i % 2 === 0
          ? { file_path: path.join(ws, 'main.ts'), old_string: 'let n: number = "x";', new_string: 'let n: number = f();' }
          : { file_path: path.join(ws, 'main.ts'), old_string: 'let n: number = f();', new_string: 'let n: number = "x";' },
        id: `b${i}`,
      }],
    })),
  ),
  async (v) => {
    const fs = require('node:fs');
    await typescriptReady(v);
    await v.ask('break and fix it, again and again');
    await waitFor('every model request', () => v.tap.generateBodies().length === benchEdits + 2, 60000 + benchEdits * 3000);
    const lines = await waitFor('the log of every edit', () => {
      const l = fs.readFileSync(path.join(v.tmp, 'agentls.log'), 'utf8').split('\n').filter((x) => x.includes('msg="editor diagnostics"'));
      return l.length === benchEdits ? l : null;
    });
    if (process.env.AGENTLS_BENCH_LOG) fs.appendFileSync(process.env.AGENTLS_BENCH_LOG, lines.join('\n') + '\n');
  },
  true,
);

// --- figures for BENCHMARKS.md (run by name: test/run.sh bench) ---------------------

scenario(
  'bench',
  () => ({ script: { turns: Array.from({ length: 5 }, (_, i) => ({ text: `pong ${i}` })) } }),
  async (v) => {
    const fs = require('node:fs');
    await v.palette('agentls probe: bench');
    const b = await waitFor('the benchmark to finish', () => {
      try {
        return JSON.parse(fs.readFileSync(v.probeFile + '.bench', 'utf8'));
      } catch {
        return null;
      }
    }, 60000);
    assert.deepEqual(b.rounds.map((r) => r.stopReason), Array(5).fill('end_turn'));
    const ms = b.rounds.map((r) => r.ms).sort((a, c) => a - c);
    const status = fs.readFileSync(`/proc/${b.pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
    console.log(`BENCH activation to server ready: ${b.readyMs} ms (extension host: agentls serve started and initialized)`);
    console.log(`BENCH prompt round trip through the extension (fake Gemini, one text turn): median ${ms[2].toFixed(1)} ms, min ${ms[0].toFixed(1)}, max ${ms[4].toFixed(1)} (5 prompts)`);
    console.log(`BENCH extension host with agentls loaded: RSS ${rss.toFixed(0)} MiB, JS heap used ${(b.heapUsed / 1048576).toFixed(1)} MiB`);
  },
  true,
);

// --- a turn's shell command undone and redone (issue 23) -----------------------------

const shellLine = 'sed -i s/hello/HELLO/ notes.txt && echo new > made.txt && rm gone.txt && chmod +x run.sh && mkdir -p build && echo o > build/out.o';

/** Presses a key with Control (and Shift) in the focused editor. */
async function ctrlKey(v, key, shift = false) {
  await v.page.keyboard.down('Control');
  if (shift) await v.page.keyboard.down('Shift');
  await v.page.keyboard.press(key);
  if (shift) await v.page.keyboard.up('Shift');
  await v.page.keyboard.up('Control');
}

scenario(
  'turn_undo_redo_shell',
  () => ({
    files: { 'notes.txt': 'hello\nworld\n', 'gone.txt': 'bye\n', 'run.sh': '#!/bin/sh\n', '.gitignore': 'build/\n', '.git/HEAD': 'ref: refs/heads/main\n' },
    script: { turns: [{ calls: [{ name: 'run_shell_command', args: { command: shellLine }, id: 's1' }] }, { text: 'Done.' }] },
    settings: { 'agentls.approvalMode': 'yolo' },
  }),
  async (v) => {
    const fs = require('node:fs');
    const at = (rel) => path.join(v.ws, rel);
    const mode = (rel) => fs.statSync(at(rel)).mode & 0o777;
    const exists = (rel) => fs.existsSync(at(rel));
    const turns = () => (v.probe()?.agentls?.turns ?? {});
    fs.chmodSync(at('run.sh'), 0o644);
    await v.open('notes.txt');
    const f = await v.ask('change the files');
    await waitFor('the answer', () => f.evaluate(() => /Done\./.test(document.body.textContent)), 60000);
    await waitFor('the prompt to end', () => v.probe().agentls.chat.running === false);
    assert.equal(v.read('notes.txt'), 'HELLO\nworld\n', 'the command changed the file');
    assert.equal(v.read('made.txt'), 'new\n');
    assert.ok(!exists('gone.txt'), 'gone.txt removed');
    assert.equal(mode('run.sh'), 0o755, 'run.sh executable');
    // VS Code reloads the open file the command rewrote.
    await waitFor('the editor to reload notes.txt', () => v.doc('notes.txt')?.text === 'HELLO\nworld\n', 30000);

    // The turn diff: a read-only diff document, each file headed by the command.
    await v.palette('agentls: Show Turn Diff');
    const diff = await waitFor('the turn diff document', () => v.probe().documents.find((d) => d.scheme === 'agentls-turn'));
    assert.match(diff.text, /^# notes\.txt: changed by run_shell_command: sed -i s\/hello\/HELLO\/ notes\.txt/m);
    assert.match(diff.text, /^\+HELLO$/m);
    assert.match(diff.text, /^# mode 0644 → 0755$/m);
    assert.match(diff.text, /^# left out: /m);
    assert.equal(diff.languageId, 'diff', 'shown in the diff language');
    assert.match(diff.uri, /agentls%20prompt%201\.diff|agentls prompt 1\.diff/, 'the name says the prompt');
    await waitFor('the diff shown with the mark', async () =>
      (await v.page.evaluate(() => document.querySelector('.part.editor .monaco-editor .view-lines')?.textContent || '')).replace(/\u00a0/g, ' ').includes('changed by run_shell_command'),
    );
    assert.deepEqual(turns().diff.changes.find((c) => c.path === at('notes.txt')).by, [`run_shell_command: ${shellLine}`]);

    // Undo: the open file in one step of VS Code's undo, the rest on disk.
    await v.open('notes.txt');
    await v.palette('agentls: Undo Last Turn');
    await waitFor('the undo message', () => /undid prompt 1/.test(turns().message || ''));
    assert.match(turns().message, /3 files reverted, 1 deleted; 2 ignored paths left out/);
    await waitFor('the notification', () => notificationButtons(v, 'undid prompt 1'));
    await waitFor('notes.txt reverted in the editor', () => v.doc('notes.txt')?.text === 'hello\nworld\n');
    await waitFor('notes.txt reverted on disk', () => v.read('notes.txt') === 'hello\nworld\n');
    assert.ok(!exists('made.txt'), 'made.txt gone');
    assert.equal(v.read('gone.txt'), 'bye\n', 'gone.txt back');
    assert.equal(mode('run.sh'), 0o644, 'run.sh mode back');
    assert.equal(v.read('build/out.o'), 'o\n', 'the ignored path is left');
    await v.open('notes.txt');
    await ctrlKey(v, 'z');
    await waitFor("one Ctrl+Z to bring the command's text back", () => v.doc('notes.txt')?.text === 'HELLO\nworld\n');
    await ctrlKey(v, 'z', true);
    await waitFor('Ctrl+Shift+Z to undo it again', () => v.doc('notes.txt')?.text === 'hello\nworld\n');

    // Redo: the command's result is back, again one step.
    await v.palette('agentls: Redo Turn');
    await waitFor('the redo message', () => /redid prompt 1/.test(turns().message || ''));
    await waitFor('notes.txt brought back in the editor', () => v.doc('notes.txt')?.text === 'HELLO\nworld\n');
    await waitFor('notes.txt brought back on disk', () => v.read('notes.txt') === 'HELLO\nworld\n');
    assert.equal(v.read('made.txt'), 'new\n', 'made.txt back');
    assert.ok(!exists('gone.txt'), 'gone.txt removed again');
    assert.equal(mode('run.sh'), 0o755, 'run.sh executable again');
    await v.open('notes.txt');
    await ctrlKey(v, 'z');
    await waitFor('one Ctrl+Z to take the redo back in the editor', () => v.doc('notes.txt')?.text === 'hello\nworld\n');
    await ctrlKey(v, 'z', true);
    await waitFor('and Ctrl+Shift+Z to bring it again', () => v.doc('notes.txt')?.text === 'HELLO\nworld\n');

    // Undone again, then the user types: the redo asks in a modal dialog; Cancel leaves it.
    await v.palette('agentls: Undo Last Turn');
    await waitFor('undone again', () => v.doc('notes.txt')?.text === 'hello\nworld\n');
    await v.open('notes.txt');
    await ctrlKey(v, 'Home');
    await v.page.keyboard.type('mine ');
    await waitFor('the typed text', () => v.doc('notes.txt')?.text === 'mine hello\nworld\n');
    await v.palette('agentls: Redo Turn');
    const dialog = await waitFor('the modal question', () =>
      v.page.evaluate(() => {
        const d = document.querySelector('.monaco-dialog-box');
        return d ? { text: d.textContent, buttons: [...d.querySelectorAll('.monaco-button')].map((b) => b.textContent.trim()) } : null;
      }),
    );
    assert.match(dialog.text, /notes\.txt changed since the undo of prompt 1, so nothing was redone/);
    assert.ok(dialog.buttons.includes('Redo the Others'), `the buttons: ${dialog.buttons}`);
    await v.page.evaluate(() => [...document.querySelectorAll('.monaco-dialog-box .monaco-button')].find((b) => b.textContent.trim() === 'Cancel').click());
    await waitFor('the dialog to close', () => v.page.evaluate(() => !document.querySelector('.monaco-dialog-box')));
    assert.equal(v.doc('notes.txt').text, 'mine hello\nworld\n', 'nothing redone');
    assert.ok(!exists('made.txt'), 'made.txt not brought back');
  },
  false,
  // About 100 s on an idle 2-core machine: a prompt, and fifteen palette and quick-open
  // round trips.
  240000,
);

// --- main --------------------------------------------------------------------------

async function main() {
  const only = process.argv.slice(2);
  const chosen = only.length ? scenarios.filter((s) => only.includes(s.name)) : scenarios.filter((s) => !s.explicit);
  if (only.length && chosen.length !== only.length) {
    console.error(`unknown scenario in ${only.join(' ')}; have ${scenarios.map((s) => s.name).join(' ')}`);
    process.exit(2);
  }
  let passed = 0;
  let failed = 0;
  for (const s of chosen) {
    const started = Date.now();
    let v;
    try {
      v = new VSCode(s.name);
      await v.start(s.opts);
      await withTimeout(s.fn(v), s.timeoutMs, s.name);
      if (process.env.E2E_SCREENSHOTS) {
        require('node:fs').mkdirSync(process.env.E2E_SCREENSHOTS, { recursive: true });
        await v.page.screenshot({ path: path.join(process.env.E2E_SCREENSHOTS, `${s.name}.png`) });
      }
      passed++;
      console.log(`PASS ${s.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } catch (err) {
      failed++;
      console.log(`FAIL ${s.name} (${((Date.now() - started) / 1000).toFixed(1)} s): ${err && err.stack ? err.stack : err}`);
      if (v && process.env.E2E_ARTIFACTS) await v.artifacts(process.env.E2E_ARTIFACTS);
    } finally {
      if (v) await v.stop();
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

function withTimeout(p, ms, what) {
  let t;
  return Promise.race([
    p,
    new Promise((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const v of VSCode.live) v.kill();
    console.log(`stopped by ${sig}`);
    process.exit(1);
  });
}

void sleep;
void processesWith;
void debug;
main().catch((err) => {
  console.error(err);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
