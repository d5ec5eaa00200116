'use strict';
// Unit tests of src/logic/ask (compiled to out/logic by `npm run compile`): how
// ask_user's questions — the model's, or an MCP server's form that agentls turns into
// them — become VS Code quick picks and input boxes, and the answer they make, which
// must be what the Neovim and Emacs front ends send.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const out = path.join(__dirname, '..', '..', 'out', 'logic');
const ask = require(path.join(out, 'ask.js'));
const confirm = require(path.join(out, 'confirm.js'));
const chat = require(path.join(out, 'chat.js'));

// The questions of editors/nvim/tests/ask_user_test.lua: every kind.
const questions = [
  { question: 'Which database?', header: 'DB', type: 'choice', options: [{ label: 'Postgres', description: 'the server' }, { label: 'SQLite', description: 'a file' }] },
  { question: 'Name the table', header: 'Table', type: 'text', placeholder: 'e.g. users' },
  { question: 'Add an index?', header: 'Index', type: 'yesno' },
  { question: 'Which columns?', header: 'Cols', type: 'choice', multiSelect: true, options: [{ label: 'id', description: '' }, { label: 'name', description: '' }] },
];
const details = { id: 'c1', toolCallId: 's/a1', type: 'ask_user', title: 'Ask User', questions };

/** An ask function answering from a script of results, recording the steps it got. */
function scripted(results) {
  const seen = [];
  const fn = async (step, i) => {
    seen.push({ i, step });
    if (seen.length > results.length) throw new Error(`question ${i + 1} was not expected`);
    return results[seen.length - 1];
  };
  return { fn, seen };
}

test('steps: a choice and yes/no are one pick, several choices canPickMany, free text an input box', () => {
  const steps = ask.steps(details, questions);
  assert.deepEqual(steps, [
    {
      kind: 'pick',
      many: false,
      title: 'agentls: Ask User (1/4)',
      placeHolder: 'DB: Which database?',
      items: [
        { label: 'Postgres', description: 'the server' },
        { label: 'SQLite', description: 'a file' },
      ],
    },
    { kind: 'text', title: 'agentls: Ask User (2/4)', prompt: 'Table: Name the table', placeHolder: 'e.g. users' },
    { kind: 'pick', many: false, title: 'agentls: Ask User (3/4)', placeHolder: 'Index: Add an index?', items: [{ label: 'Yes' }, { label: 'No' }] },
    { kind: 'pick', many: true, title: 'agentls: Ask User (4/4)', placeHolder: 'Cols: Which columns? (pick one or more)', items: [{ label: 'id' }, { label: 'name' }] },
  ]);
  // One question: no count; no header: the question alone; no placeholder: none.
  assert.deepEqual(ask.steps({ type: 'ask_user' }, [{ question: 'Why?', type: 'text' }]), [{ kind: 'text', title: 'agentls: Ask User', prompt: 'Why?' }]);
  // A choice without usable options is free text (as in Neovim and Emacs).
  assert.equal(ask.steps(details, [{ question: 'Q', type: 'choice', options: [{ label: '' }] }])[0].kind, 'text');
});

test('askAll: the answers by index, as Neovim and Emacs send them', async () => {
  const s = scripted(['SQLite', 'accounts', 'Yes', ['name', 'id']]);
  const a = await ask.askAll(details, s.fn);
  assert.deepEqual(a, { outcome: 'proceed_once', answers: { 0: 'SQLite', 1: 'accounts', 2: 'Yes', 3: 'id, name' } });
  assert.deepEqual(s.seen.map((x) => x.i), [0, 1, 2, 3], 'in order, one at a time');
});

test('askAll: an empty answer is left out; the others still go', async () => {
  const a = await ask.askAll(details, scripted(['Postgres', '', 'No', []]).fn);
  assert.deepEqual(a, { outcome: 'proceed_once', answers: { 0: 'Postgres', 2: 'No' } });
});

test('askAll: dismissing any question dismisses them all, and nothing after it is asked', async () => {
  for (let at = 0; at < questions.length; at++) {
    const results = ['SQLite', 'accounts', 'Yes', ['id']].slice(0, at).concat([undefined]);
    const s = scripted(results);
    assert.deepEqual(await ask.askAll(details, s.fn), { outcome: 'cancel' }, `dismissed at question ${at + 1}`);
    assert.equal(s.seen.length, at + 1);
  }
});

test('askAll: an answer that was not offered is never passed on; answered elsewhere stops asking', async () => {
  assert.deepEqual(await ask.askAll(details, scripted(['MySQL']).fn), { outcome: 'cancel' });
  assert.deepEqual(await ask.askAll(details, scripted([['Postgres', 'SQLite']]).fn), { outcome: 'cancel' }, 'two picks for one choice');
  assert.deepEqual(await ask.askAll(details, scripted(['SQLite', 'accounts', 'Yes', ['id', 'rowid']]).fn), { outcome: 'cancel' });
  let answered = false;
  const s = scripted(['SQLite', 'x']);
  const a = await ask.askAll(details, async (step, i) => {
    const r = await s.fn(step, i);
    answered = true; // the card's Dismiss, or the server took the question back
    return r;
  }, () => answered);
  assert.deepEqual(a, { outcome: 'cancel' });
  assert.equal(s.seen.length, 1);
});

test('questionsOf: questions the extension cannot read are an error, not an answer', async () => {
  assert.match(ask.questionsOf({ type: 'ask_user' }).message, /no questions/);
  assert.match(ask.questionsOf({ type: 'ask_user', questions: [] }).message, /no questions/);
  assert.match(ask.questionsOf({ type: 'ask_user', questions: [{ question: 'a' }, { header: 'b' }] }).message, /question 2/);
  await assert.rejects(ask.askAll({ type: 'ask_user', questions: 'x' }, scripted([]).fn), /no questions/);
});

test("an MCP server's form (as agentls sends it to askUser clients) reaches the same UI", async () => {
  // tools/mcp/askelicit.go: a question a field, headed by its name; choices as options
  // (labels), an array field several choices, a boolean yes/no, a default in the placeholder.
  const form = {
    id: 'elicit-abc',
    type: 'ask_user',
    title: 'MCP server everything asks: Please provide your details',
    questions: [
      { question: 'Name: your full name', header: 'name', type: 'text', placeholder: 'default: Ada' },
      { question: 'Colour', header: 'colour', type: 'choice', options: [{ label: 'Red', description: '' }, { label: 'Green', description: '' }] },
      { question: 'tags', header: 'tags', type: 'choice', multiSelect: true, options: [{ label: 'a', description: '' }, { label: 'b', description: '' }], placeholder: 'default: [a]' },
      { question: 'subscribe', header: 'subscribe', type: 'yesno' },
    ],
  };
  const steps = ask.steps(form, form.questions);
  assert.equal(steps[0].title, 'agentls: MCP server everything asks: Please provide your details (1/4)', 'the message is in view');
  assert.deepEqual(steps.map((s) => [s.kind, s.kind === 'pick' ? s.many : s.placeHolder]), [
    ['text', 'default: Ada'],
    ['pick', false],
    ['pick', true],
    ['pick', false],
  ]);
  assert.equal(steps[2].placeHolder, 'tags: tags (pick one or more) — default: [a]', 'a default in view');
  // The empty name takes the default (the server applies it); the labels go back as
  // the server maps them to values ("a, b" split on ", ").
  const a = await ask.askAll(form, scripted(['', 'Green', ['b', 'a'], 'No']).fn);
  assert.deepEqual(a, { outcome: 'proceed_once', answers: { 1: 'Green', 2: 'a, b', 3: 'No' } });
  // A form without fields: one yes/no question.
  const bare = { type: 'ask_user', title: 'MCP server s asks: Go on?', questions: [{ question: 'Go on?', header: 's', type: 'yesno' }] };
  assert.deepEqual(await ask.askAll(bare, scripted(['Yes']).fn), { outcome: 'proceed_once', answers: { 0: 'Yes' } });
});

test('the chat card: the questions from the arguments, the answers plain, Dismiss as its only button', () => {
  assert.deepEqual(ask.cardQuestions({ questions }), ['DB: Which database?', 'Table: Name the table', 'Index: Add an index?', 'Cols: Which columns?']);
  assert.equal(ask.cardQuestions({}), undefined);
  assert.equal(ask.cardQuestions({ questions: [{ nope: 1 }] }), undefined);
  assert.equal(ask.plainAnswers('**User answered:**\n  DB → SQLite\n  Cols → id, **x'), 'User answered:\n  DB → SQLite\n  Cols → id, **x');
  const dismiss = confirm.choices(details);
  assert.deepEqual(dismiss.map((c) => [c.label, c.reject, confirm.answerFor(c)]), [['Dismiss', true, { outcome: 'cancel' }]]);
  assert.match(confirm.question(details), /^Ask User: answer in the box at the top/);
  assert.equal(confirm.alwaysNote({ ...details, noAlways: true }), undefined);

  const t = new chat.Transcript();
  t.apply({ kind: 'tool_call', toolCallId: 's/a1', name: 'ask_user', title: 'Asking user: Which database?', toolKind: 'think', status: 'pending', rawInput: { questions } });
  assert.deepEqual(t.tool('s/a1').questions, ask.cardQuestions({ questions }));
  t.apply({ kind: 'tool_call', toolCallId: 's/x', name: 'other', title: 'x', toolKind: 'think', status: 'pending', rawInput: { questions } });
  assert.equal(t.tool('s/x').questions, undefined, 'only ask_user cards list questions');
});
