'use strict';
// The end-to-end harness: a real VS Code (code-server) with the extension installed
// from its .vsix, driven through Debian's Chromium by puppeteer-core, against the real
// agentls binary and the fake Gemini API (internal/fakegemini) replaying a script.
//
// Each scenario gets its own everything: a temporary HOME and XDG directories, VS
// Code's user-data and extensions directories, a workspace, a fake Gemini server, a
// code-server on a free loopback port, and a browser profile. Everything is removed
// afterwards unless E2E_KEEP=1.
//
// Environment (set by run.sh): AGENTLS_BIN, FAKEGEMINI_BIN, CODE_SERVER_BIN,
// E2E_EXTENSIONS (an extensions directory with the extension and the test probe
// installed), CHROMIUM (default /usr/bin/chromium), E2E_ARTIFACTS (screenshots and logs
// of failures), E2E_VERBOSE=1.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const puppeteer = require('puppeteer-core');

const verbose = process.env.E2E_VERBOSE === '1';
function debug(...args) {
  if (verbose) console.error('  [e2e]', ...args);
}

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run test/run.sh)`);
  return v;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls fn until it returns a truthy value; throws after timeoutMs, saying what. */
async function waitFor(what, fn, timeoutMs = 20000, everyMs = 100) {
  const start = Date.now();
  const deadline = start + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) {
        if (Date.now() - start > 2000) debug(`${Date.now() - start} ms waiting for ${what}`);
        return v;
      }
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
    }
    await sleep(everyMs);
  }
}

/**
 * The port code-server listens on, from its log ("HTTP server listening on
 * http://127.0.0.1:PORT/"): it is started on port 0, so that no other process can take
 * the port between a free one being picked and code-server binding it (other test
 * suites on the machine, or any outgoing connection, may).
 */
function listeningPort(logFile) {
  let text = '';
  try {
    text = fs.readFileSync(logFile, 'utf8');
  } catch {
    return null;
  }
  const m = /HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text);
  return m ? Number(m[1]) : null;
}

function get(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.setTimeout(2000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Starts the fake Gemini API on a free loopback port, replaying script. */
async function startFake(dir, script) {
  const file = path.join(dir, 'script.json');
  fs.writeFileSync(file, JSON.stringify(script));
  const proc = spawn(need('FAKEGEMINI_BIN'), ['-script', file, '-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  const url = await waitFor('fakegemini to print its URL', () => {
    if (proc.exitCode !== null) throw new Error(`fakegemini exited ${proc.exitCode}: ${stderr}`);
    const nl = out.indexOf('\n');
    return nl >= 0 ? out.slice(0, nl).trim() : null;
  }, 10000);
  return {
    url,
    /** The generate calls that consumed a script turn, as logged. */
    turns: () => (stderr.match(/turn=[1-9]/g) || []).length,
    stderr: () => stderr,
    stop: () => stopProcess(proc),
    proc,
  };
}

function stopProcess(proc, signal = 'SIGTERM') {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const t = setTimeout(() => {
      try {
        process.kill(proc.detachedGroup ? -proc.pid : proc.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }, 5000);
    proc.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    try {
      process.kill(proc.detachedGroup ? -proc.pid : proc.pid, signal);
    } catch {
      clearTimeout(t);
      resolve();
    }
  });
}

/**
 * A recording proxy in front of the fake Gemini API on a free loopback port: every
 * request passes through unchanged (answers streamed back as they come), and its method,
 * path and body are kept, so that a scenario can check what agentls sent the model (the
 * fakegemini command logs requests without their bodies).
 */
async function startTap(upstream) {
  const target = new URL(upstream);
  const requests = [];
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method, path: req.url, body: body.toString('utf8'), at: Date.now() });
      const up = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (ur) => {
          res.writeHead(ur.statusCode || 502, ur.headers);
          ur.pipe(res);
        },
      );
      up.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`tap: ${err.message}`);
      });
      up.end(body);
    });
  });
  await new Promise((resolve, reject) => {
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    /** Every request so far: { method, path, body (text), at (Date.now() when it had arrived) }. */
    requests: () => requests.slice(),
    /** The bodies of the model calls (generateContent, streamGenerateContent), parsed. */
    generateBodies: () => requests.filter((r) => /:(stream)?[gG]enerateContent/.test(r.path)).map((r) => JSON.parse(r.body)),
    /** When each model call arrived (Date.now()), in order. */
    generateTimes: () => requests.filter((r) => /:(stream)?[gG]enerateContent/.test(r.path)).map((r) => r.at),
    close: () =>
      new Promise((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  };
}

/**
 * A running VS Code for one scenario. start(name, setup) calls setup with the
 * workspace's path and opens the workspace it describes ({ files: {relative path:
 * text}, script: the fake model's turns, settings: VS Code user settings, record: true
 * to put a recording proxy before the fake model, v.tap }).
 */
class VSCode {
  /** The scenarios' VS Codes not stopped yet. */
  static live = new Set();

  constructor(name) {
    this.name = name;
  }

  async start(setup) {
    const v = this;
    const name = v.name;
    v.tmp = fs.realpathSync(fs.mkdtempSync(path.join(process.env.E2E_TMP || os.tmpdir(), `e2e-${name}-`)));
    const dirs = ['home', 'config', 'data', 'state', 'cache', 'user-data/User', 'user-data/Machine', 'chrome', 'ws'];
    for (const d of dirs) fs.mkdirSync(path.join(v.tmp, d), { recursive: true });
    v.ws = path.join(v.tmp, 'ws');
    const { files = {}, script, settings = {}, record = false } = setup(v.ws);
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(v.ws, rel)), { recursive: true });
      fs.writeFileSync(path.join(v.ws, rel), text);
    }
    v.extensions = path.join(v.tmp, 'extensions');
    fs.cpSync(need('E2E_EXTENSIONS'), v.extensions, { recursive: true });
    // code-server's extension host is a remote one: settings of machine scope (such as
    // agentls.path) are read from the Machine settings, the others from the User ones.
    const userSettings = JSON.stringify(
        {
          'workbench.startupEditor': 'none',
          'chat.disableAIFeatures': true,
          'security.workspace.trust.enabled': false,
          'extensions.autoUpdate': false,
          'extensions.autoCheckUpdates': false,
          'files.autoSave': 'off',
          'workbench.tips.enabled': false,
          'workbench.enableExperiments': false,
          'telemetry.telemetryLevel': 'off',
          'update.mode': 'none',
          'editor.minimap.enabled': false,
          // Side by side at this window size too, so that clicks land on the proposal.
          'diffEditor.useInlineViewWhenSpaceIsLimited': false,
          // The terminal's DOM renderer, so that its text can be read.
          'terminal.integrated.gpuAcceleration': 'off',
          'agentls.path': need('AGENTLS_BIN'),
          'agentls.logFile': path.join(v.tmp, 'agentls.log'),
          ...settings,
        },
        null,
        2,
      );
    fs.writeFileSync(path.join(v.tmp, 'user-data/User/settings.json'), userSettings);
    fs.writeFileSync(path.join(v.tmp, 'user-data/Machine/settings.json'), userSettings);
    v.fake = await startFake(v.tmp, script || { turns: [] });
    if (record) v.tap = await startTap(v.fake.url);
    const cfg = path.join(v.tmp, 'code-server.yaml');
    fs.writeFileSync(cfg, 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
    v.probeFile = path.join(v.tmp, 'probe.json');
    const env = {
      PATH: process.env.PATH,
      LANG: 'C.UTF-8',
      HOME: path.join(v.tmp, 'home'),
      XDG_CONFIG_HOME: path.join(v.tmp, 'config'),
      XDG_DATA_HOME: path.join(v.tmp, 'data'),
      XDG_STATE_HOME: path.join(v.tmp, 'state'),
      XDG_CACHE_HOME: path.join(v.tmp, 'cache'),
      TMPDIR: v.tmp,
      GEMINI_API_KEY: 'test-key',
      GOOGLE_GEMINI_BASE_URL: v.tap ? v.tap.url : v.fake.url,
      AGENTLS_PROBE_FILE: v.probeFile,
    };
    v.log = fs.openSync(path.join(v.tmp, 'code-server.log'), 'w');
    v.started = Date.now();
    VSCode.live.add(v);
    v.proc = spawn(
      need('CODE_SERVER_BIN'),
      [
        '--config', cfg,
        '--user-data-dir', path.join(v.tmp, 'user-data'),
        '--extensions-dir', v.extensions,
        '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
        '--disable-getting-started-override',
        v.ws,
      ],
      { env, stdio: ['ignore', v.log, v.log], detached: true },
    );
    v.proc.detachedGroup = true;
    v.port = await waitFor('code-server to say its port', () => {
      if (v.proc.exitCode !== null) throw new Error(`code-server exited ${v.proc.exitCode}`);
      return listeningPort(path.join(v.tmp, 'code-server.log'));
    }, 30000, 200);
    await waitFor('code-server /healthz', async () => {
      if (v.proc.exitCode !== null) throw new Error(`code-server exited ${v.proc.exitCode}`);
      const r = await get(`http://127.0.0.1:${v.port}/healthz`);
      return r.status === 200 && r.body.includes('status');
    }, 30000, 200);
    v.browser = await puppeteer.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      userDataDir: path.join(v.tmp, 'chrome'),
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--window-size=1400,900'],
      defaultViewport: { width: 1400, height: 900 },
      protocolTimeout: 60000,
    });
    v.page = await v.browser.newPage();
    v.page.on('pageerror', (e) => debug('page error', e.message));
    debug(`${name}: code-server up in ${Date.now() - v.started} ms`);
    await v.page.goto(`http://127.0.0.1:${v.port}/?folder=${encodeURIComponent(v.ws)}`, { waitUntil: 'domcontentloaded', timeout: 60000 });
    await v.page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    debug(`${name}: workbench in ${Date.now() - v.started} ms`);
    await waitFor('agentls to start its server', () => {
      const s = v.probe();
      return s && s.agentls && s.agentls.server === 'idle' ? s : null;
    }, 60000);
    debug(`${name}: ready in ${Date.now() - v.started} ms on port ${v.port}`);
  }

  /** Reloads the window: a new extension host, agentls activated and started anew. */
  async reload() {
    const before = this.probe().pid;
    await this.page.keyboard.press('Escape');
    await this.page.reload({ waitUntil: 'domcontentloaded', timeout: 60000 });
    await this.page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    await waitFor('the new extension host to start agentls', () => {
      const s = this.probe();
      return s && s.pid !== before && s.agentls && s.agentls.server === 'idle';
    }, 60000);
  }

  /**
   * Takes the keyboard focus back from a webview (the chat restored after a reload
   * focuses its input once it has loaded), so that F1 reaches the workbench.
   */
  async focusWorkbench() {
    await this.chat();
    await this.page.evaluate(() => document.activeElement && document.activeElement.blur && document.activeElement.blur());
  }

  /** The probe's latest snapshot (null before the first). */
  probe() {
    try {
      return JSON.parse(fs.readFileSync(this.probeFile, 'utf8'));
    } catch {
      return null;
    }
  }

  doc(rel) {
    const s = this.probe();
    const p = path.join(this.ws, rel);
    return s && s.documents.find((d) => d.path === p && d.scheme === 'file');
  }

  read(rel) {
    return fs.readFileSync(path.join(this.ws, rel), 'utf8');
  }

  chatItems() {
    const s = this.probe();
    return (s && s.agentls && s.agentls.chat && s.agentls.chat.items) || [];
  }

  tool(name) {
    return this.chatItems().find((i) => i.kind === 'tool' && i.name === name);
  }

  /** Runs a command from the palette (F1) by its title (the row whose label is exactly it). */
  async palette(title) {
    await this.page.keyboard.press('Escape');
    await this.page.keyboard.press('F1');
    await this.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 30000 });
    await this.page.keyboard.type(title);
    await waitFor(`the palette to offer "${title}"`, () =>
      this.page.evaluate((t) => {
        const rows = [...document.querySelectorAll('.quick-input-list .monaco-list-row')];
        const row = rows.find((r) => {
          const label = r.querySelector('.label-name');
          return label && label.textContent.trim() === t;
        });
        if (row) {
          row.click();
          return true;
        }
        return false;
      }, title),
    30000);
  }

  /** Opens a workspace file in a text editor (quick open; never a diff of it). */
  async open(rel) {
    await this.page.keyboard.press('Escape');
    await this.page.keyboard.down('Control');
    await this.page.keyboard.press('p');
    await this.page.keyboard.up('Control');
    await this.page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 10000 });
    await this.page.keyboard.type(rel);
    // The file's row, not an open diff's ("greet.txt (current ↔ agentls proposal)").
    await waitFor(`quick open to offer ${rel}`, () =>
      this.page.evaluate((name) => {
        const rows = [...document.querySelectorAll('.quick-input-list .monaco-list-row')];
        const row = rows.find((r) => r.querySelector('.label-name')?.textContent.trim() === name && !r.textContent.includes('↔'));
        if (row) {
          row.click();
          return true;
        }
        return false;
      }, path.basename(rel)),
    10000);
    await waitFor(`${rel} to be the active editor`, () => {
      const s = this.probe();
      return s && s.activeEditor && s.activeEditor.startsWith('file:') && s.activeEditor.endsWith('/' + rel);
    });
    await waitFor(`${rel} to have the keyboard focus`, () => this.editorFocused());
  }

  /**
   * Whether the keyboard focus is in a text editor of the editor area (not in a
   * webview, the palette or a notification): where typed keys edit the file.
   */
  editorFocused() {
    return this.page.evaluate(() => {
      const a = document.activeElement;
      return !!(a && a.closest('.part.editor .monaco-editor') && !a.closest('.quick-input-widget'));
    });
  }

  /** The chat webview's frame (the one with the prompt box). */
  async chat() {
    try {
      return await waitFor('the chat webview', async () => {
        for (const f of this.page.frames()) {
          if (f.isDetached()) continue;
          try {
            // The input exists before the script that handles it has run: wait for both.
            if (await f.evaluate(() => !!document.getElementById('prompt') && document.body.dataset.ready === '1')) return f;
          } catch {
            // a frame going away or not ready
          }
        }
        return null;
      }, 20000, 200);
    } catch (err) {
      err.message += `; frames: ${this.page.frames().map((f) => f.url()).join(' | ')}`;
      throw err;
    }
  }

  /** Types a prompt into the chat and sends it with Enter. */
  async ask(text) {
    await this.palette('agentls: Open Chat');
    const f = await this.chat();
    await f.waitForSelector('#prompt', { visible: true });
    await f.click('#prompt');
    await f.type('#prompt', text);
    // Under load the webview may not have taken every key yet: Enter goes to the page,
    // and would send what has arrived so far.
    await waitFor('the prompt to be typed', () => f.evaluate((t) => document.querySelector('#prompt').value === t, text));
    await f.focus('#prompt');
    await this.page.keyboard.press('Enter');
    await waitFor('the prompt to show in the chat', () => f.evaluate((t) => [...document.querySelectorAll('.item.user .text')].some((e) => e.textContent === t), text));
    return f;
  }

  /** Text of the status-bar item of agentls. */
  statusBar() {
    return this.page.evaluate(() => {
      const items = [...document.querySelectorAll('.statusbar-item')];
      const it = items.find((e) => e.textContent.includes('agentls:'));
      return it ? it.textContent.trim() : '';
    });
  }

  /**
   * The tooltip of agentls's status-bar item as the workbench shows it: the mouse is
   * moved onto the item and the hover's text read (then the mouse moved away).
   */
  async statusTooltip() {
    const box = await waitFor('the agentls status-bar item', () =>
      this.page.evaluate(() => {
        const it = [...document.querySelectorAll('.statusbar-item')].find((e) => e.textContent.includes('agentls:'));
        if (!it) return null;
        const r = it.getBoundingClientRect();
        return r.width > 0 ? { x: r.x + r.width / 2, y: r.y + r.height / 2 } : null;
      }),
    );
    await this.page.mouse.move(1, 1);
    await this.page.mouse.move(box.x, box.y, { steps: 3 });
    try {
      return await waitFor('the status-bar hover', () =>
        this.page.evaluate(() => {
          const h = [...document.querySelectorAll('.workbench-hover, .monaco-hover')].find((e) => e.offsetParent !== null && e.textContent.includes('agentls is'));
          return h ? h.innerText : null;
        }),
      );
    } finally {
      await this.page.mouse.move(1, 1);
    }
  }

  /** Clicks the button labelled label of the notification whose text includes text. */
  async clickNotification(text, label) {
    const ok = await waitFor(`a notification "${text}" with "${label}"`, () =>
      this.page.evaluate((t, l) => {
        for (const toast of document.querySelectorAll('.notification-toast')) {
          if (!toast.textContent.includes(t)) continue;
          const b = [...toast.querySelectorAll('.monaco-button')].find((x) => x.textContent.trim() === l);
          if (b) {
            b.click();
            return true;
          }
        }
        return false;
      }, text, label),
    15000);
    return ok;
  }

  /** Clicks an editor-title action by the start of its label (e.g. "Accept Edit"). */
  async clickEditorAction(label) {
    return waitFor(`the editor action "${label}"`, () =>
      this.page.evaluate((l) => {
        const a = [...document.querySelectorAll('.editor-actions .action-label')].find((x) => {
          const name = x.getAttribute('aria-label') || x.getAttribute('title') || '';
          return name === l || name.startsWith(l + ' (');
        });
        if (a) {
          a.click();
          return true;
        }
        return false;
      }, label),
    10000);
  }

  /** Saves a screenshot and the logs of a failed scenario. */
  async artifacts(dir) {
    fs.mkdirSync(dir, { recursive: true });
    try {
      await this.page.screenshot({ path: path.join(dir, `${this.name}.png`) });
    } catch {
      // no page
    }
    for (const f of ['code-server.log', 'probe.json', 'agentls.log']) {
      try {
        fs.copyFileSync(path.join(this.tmp, f), path.join(dir, `${this.name}.${f}`));
      } catch {
        // not there
      }
    }
    if (this.tap) {
      try {
        fs.writeFileSync(path.join(dir, `${this.name}.model-requests.json`), JSON.stringify(this.tap.requests(), null, 1));
      } catch {
        // not writable
      }
    }
    try {
      fs.writeFileSync(path.join(dir, `${this.name}.fakegemini.log`), this.fake.stderr());
    } catch {
      // no fake
    }
    // The extension's output channel: the newest exthost log of the agentls channel.
    try {
      const logs = path.join(this.tmp, 'user-data', 'logs');
      const found = [];
      const walk = (d) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
          const p = path.join(d, e.name);
          if (e.isDirectory()) walk(p);
          else if (/agentls|exthost/.test(e.name)) found.push(p);
        }
      };
      walk(logs);
      for (const p of found) fs.copyFileSync(p, path.join(dir, `${this.name}.${path.basename(path.dirname(p))}.${path.basename(p)}`));
    } catch {
      // no logs
    }
  }

  async stop() {
    try {
      if (this.browser) await this.browser.close();
    } catch {
      // gone
    }
    if (this.proc) await stopProcess(this.proc);
    if (this.tap) await this.tap.close();
    if (this.fake) await this.fake.stop();
    if (this.log !== undefined) fs.closeSync(this.log);
    if (this.tmp && process.env.E2E_KEEP !== '1') fs.rmSync(this.tmp, { recursive: true, force: true });
    VSCode.live.delete(this);
  }

  /** Kills what a scenario started, at once (the runner is being stopped). */
  kill() {
    for (const p of [this.proc, this.fake && this.fake.proc]) {
      if (!p || p.exitCode !== null || p.signalCode !== null) continue;
      try {
        process.kill(p.detachedGroup ? -p.pid : p.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    try {
      if (this.browser) this.browser.process()?.kill('SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Lists the processes whose command line contains marker (for "no process left"). */
function processesWith(marker) {
  const out = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(marker)) out.push({ pid: Number(pid), cmd });
    } catch {
      // gone
    }
  }
  return out;
}

module.exports = { VSCode, waitFor, sleep, processesWith, debug, need };
