'use strict';
// End-to-end scenarios of the agentls extension in a real VS Code (see harness.js).
// usage: node test/e2e/run.js [SCENARIO...]; prints "N passed, M failed" and exits 1 on
// any failure.

const assert = require('node:assert/strict');
const path = require('node:path');
const { VSCode, waitFor, sleep, processesWith, debug } = require('./harness');

const scenarios = [];
function scenario(name, opts, fn) {
  scenarios.push({ name, opts, fn });
}

// --- a prompt and a read ------------------------------------------------------------

scenario(
  'prompt_read',
  (ws) => ({
    files: { 'notes.txt': 'hello\nworld\n' },
    script: {
      turns: [
        { text: 'Let me read it.', calls: [{ name: 'read_file', args: { file_path: path.join(ws, 'notes.txt') }, id: 'r1' }] },
        { text: 'The file starts with **hello** and ends with `world`.', chunks: 4 },
      ],
    },
  }),
  async (v) => {
    const f = await v.ask('what is in notes.txt?');
    // The answer streams in as Markdown, after a tool card for the read.
    await waitFor('the answer in the chat', () =>
      f.evaluate(() => {
        const md = [...document.querySelectorAll('.item.message .markdown')].map((e) => e.innerHTML).join('\n');
        return md.includes('<strong>hello</strong>') && md.includes('<code>world</code>');
      }),
    );
    const card = await f.evaluate(() => {
      const c = document.querySelector('.item.tool');
      return c && { status: c.dataset.status, text: c.textContent };
    });
    assert.ok(card, 'a tool card');
    assert.equal(card.status, 'completed');
    assert.match(card.text, /notes\.txt/);
    await waitFor('the turn to end with a note', () => f.evaluate(() => /done/.test(document.querySelector('.item.note:last-child')?.textContent || '')));
    assert.equal(v.fake.turns(), 2, 'the model was asked twice (the prompt, then the read result)');
    const status = await v.statusBar();
    assert.match(status, /agentls: idle · default · default model/);
  },
);

// --- main --------------------------------------------------------------------------

async function main() {
  const only = process.argv.slice(2);
  const chosen = only.length ? scenarios.filter((s) => only.includes(s.name)) : scenarios;
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
      await withTimeout(s.fn(v), 90000, s.name);
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

void sleep;
void processesWith;
void debug;
main().catch((err) => {
  console.error(err);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
