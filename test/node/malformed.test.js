'use strict';
// Bad input on the raw wire: the server answers what JSON-RPC 2.0 says it must and keeps
// serving. These tests write frames by hand rather than through vscode-jsonrpc, which
// would refuse to send them.

const test = require('node:test');
const assert = require('node:assert/strict');
const { pathToFileURL } = require('node:url');
const { Client, baseCapabilities } = require('./lib/client');

const T = { timeout: 20000 };

/** Reads Content-Length framed messages from a stream. */
class FrameReader {
  constructor(stream) {
    this.buf = Buffer.alloc(0);
    this.messages = [];
    this.waiters = [];
    stream.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.drain();
    });
  }

  drain() {
    for (;;) {
      const sep = this.buf.indexOf('\r\n\r\n');
      if (sep < 0) return;
      const header = this.buf.subarray(0, sep).toString('ascii');
      const m = /Content-Length:\s*(\d+)/i.exec(header);
      if (!m) throw new Error(`server sent a frame without Content-Length: ${JSON.stringify(header)}`);
      const len = Number(m[1]);
      if (this.buf.length < sep + 4 + len) return;
      const body = this.buf.subarray(sep + 4, sep + 4 + len).toString('utf8');
      this.buf = this.buf.subarray(sep + 4 + len);
      const msg = JSON.parse(body);
      this.messages.push(msg);
      for (const w of this.waiters.slice()) {
        if (w.pred(msg)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(msg);
        }
      }
    }
  }

  /** The first message, seen or future, that matches pred; null after ms. */
  next(pred, ms = 5000) {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const w = { pred, resolve: (m) => { clearTimeout(timer); resolve(m); } };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        resolve(null);
      }, ms);
      this.waiters.push(w);
    });
  }
}

function frame(body) {
  const b = Buffer.from(body, 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`, 'ascii'), b]);
}

async function rawServer(fn) {
  const c = new Client({ raw: true, files: { 'a.txt': 'raw hello\n' } });
  const reader = new FrameReader(c.proc.stdout);
  const send = (obj) => c.proc.stdin.write(typeof obj === 'string' || Buffer.isBuffer(obj) ? obj : frame(JSON.stringify(obj)));
  const request = async (id, method, params) => {
    send({ jsonrpc: '2.0', id, method, params });
    const res = await reader.next((m) => m.id === id && !m.method);
    assert.ok(res, `no answer to ${method} (id ${id})${c.stderrTail()}`);
    return res;
  };
  try {
    await fn({ c, reader, send, request });
  } finally {
    await c.dispose();
  }
}

function initParams(c) {
  const rootUri = pathToFileURL(c.root).href;
  return { processId: process.pid, rootUri, workspaceFolders: [{ uri: rootUri, name: 'ws' }], capabilities: baseCapabilities() };
}

test('invalid JSON gets a parse error and the server keeps serving', T, async () => {
  await rawServer(async ({ c, reader, send, request }) => {
    send(frame('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{'));
    // JSON-RPC 2.0: invalid JSON is answered with a parse error whose id is null.
    const parseError = await reader.next((m) => m.error && m.error.code === -32700, 5000);
    assert.ok(parseError, `no -32700 parse error answered${c.stderrTail()}`);
    assert.equal(parseError.id, null, 'a parse error answers id null');
    assert.equal(c.proc.exitCode, null, 'still running after a parse error');

    const init = await request(2, 'initialize', initParams(c));
    assert.ok(init.result, `initialize after bad JSON: ${JSON.stringify(init)}`);
    assert.equal(init.result.serverInfo.name, 'agentls');
    send({ jsonrpc: '2.0', method: 'initialized', params: {} });

    send(frame('this is not json at all'));
    send(frame('[1, 2,'));
    const parseErrors = () => reader.messages.filter((m) => m.error && m.error.code === -32700).length;
    // Within the bound of any answer here (FrameReader.next's 5 s), not 100 polls.
    for (const deadline = Date.now() + 5000; parseErrors() < 3 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    assert.equal(parseErrors(), 3, 'each bad frame gets its parse error');
    const res = await request(3, 'workspace/executeCommand', { command: 'agentls.runTool', arguments: [{ name: 'read_file', args: { file_path: 'a.txt' } }] });
    assert.ok(res.result, JSON.stringify(res));
    assert.equal(res.result.status, 'success');
    assert.match(res.result.output, /raw hello/);
  });
});

test('a message that is valid JSON but not JSON-RPC is refused and the server keeps serving', T, async () => {
  await rawServer(async ({ c, reader, send, request }) => {
    const init = await request(1, 'initialize', initParams(c));
    assert.ok(init.result);
    send({ jsonrpc: '2.0', method: 'initialized', params: {} });
    send(frame('{"jsonrpc":"2.0","id":7,"method":42}'));
    // JSON-RPC 2.0: a request object that is not valid is an Invalid Request (-32600),
    // answered with its id when it can be read.
    const invalid = await reader.next((m) => m.id === 7 && m.error, 5000);
    assert.ok(invalid, `no answer to a request whose method is a number${c.stderrTail()}`);
    assert.equal(invalid.error.code, -32600);
    send(frame('"just a string"'));
    const invalid2 = await reader.next((m) => m.id === null && m.error && m.error.code === -32600, 5000);
    assert.ok(invalid2, 'a JSON string is an Invalid Request with id null');
    const res = await request(2, 'workspace/executeCommand', { command: 'agentls.listTools', arguments: [{}] });
    assert.ok(Array.isArray(res.result), JSON.stringify(res));
  });
});

test('unknown methods get MethodNotFound and invalid params get InvalidParams', T, async () => {
  await rawServer(async ({ c, send, request }) => {
    assert.ok((await request(1, 'initialize', initParams(c))).result);
    send({ jsonrpc: '2.0', method: 'initialized', params: {} });

    const unknown = await request(2, 'agentls/noSuchMethod', {});
    assert.equal(unknown.error && unknown.error.code, -32601, JSON.stringify(unknown));

    // An unknown notification is ignored: no answer, no disconnection.
    send({ jsonrpc: '2.0', method: 'custom/whatever', params: { x: 1 } });

    const bad = await request(3, 'workspace/executeCommand', { command: 'agentls.runTool', arguments: 'not an array' });
    assert.equal(bad.error && bad.error.code, -32602, JSON.stringify(bad));
    assert.ok(bad.error.message.length > 0, 'the error says what is wrong');

    const noName = await request(4, 'workspace/executeCommand', { command: 'agentls.runTool', arguments: [{ args: {} }] });
    assert.equal(noName.error && noName.error.code, -32602, JSON.stringify(noName));

    const unknownCommand = await request(5, 'workspace/executeCommand', { command: 'agentls.noSuchCommand', arguments: [{}] });
    assert.ok(unknownCommand.error, `an unknown command is an error: ${JSON.stringify(unknownCommand)}`);

    const ok = await request(6, 'workspace/executeCommand', { command: 'agentls.runTool', arguments: [{ name: 'read_file', args: { file_path: 'a.txt' } }] });
    assert.equal(ok.result && ok.result.status, 'success', JSON.stringify(ok));
  });
});

test('a frame split across writes and two frames in one write are both read', T, async () => {
  await rawServer(async ({ c, reader, send }) => {
    const whole = frame(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initParams(c) }));
    send(whole.subarray(0, 10));
    await new Promise((r) => setTimeout(r, 50));
    send(whole.subarray(10));
    const init = await reader.next((m) => m.id === 1);
    assert.ok(init && init.result, JSON.stringify(init));
    send(Buffer.concat([
      frame(JSON.stringify({ jsonrpc: '2.0', method: 'initialized', params: {} })),
      frame(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'workspace/executeCommand', params: { command: 'agentls.listTools', arguments: [{}] } })),
    ]));
    const list = await reader.next((m) => m.id === 2);
    assert.ok(list && Array.isArray(list.result), JSON.stringify(list));
  });
});
