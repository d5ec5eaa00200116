'use strict';
// Lifecycle and capability negotiation (docs/protocol.md, "Lifecycle and capabilities").

const test = require('node:test');
const assert = require('node:assert/strict');
const { withClient, baseCapabilities, richExperimental } = require('./lib/client');

// The commands of this version.
const commands = [
  'agentls.runTool',
  'agentls.listTools',
  'agentls.cancel',
  'agentls.setApprovalMode',
  'agentls.confirm',
  'agentls.listSessions',
  'agentls.discoverTools',
  'agentls.mcpStatus',
  'agentls.listPrompts',
  'agentls.trust',
  'agentls.prompt',
  'agentls.runPrompt',
];

test('initialize (agentls with no arguments) returns the capabilities of the protocol', { timeout: 20000 }, async () => {
  await withClient({ args: [], files: { 'a.txt': 'a\n' } }, async (c) => {
    const res = await c.initialize();
    const caps = res.capabilities;

    assert.deepEqual(res.serverInfo && res.serverInfo.name, 'agentls');
    assert.equal(typeof res.serverInfo.version, 'string');
    assert.notEqual(res.serverInfo.version, '');

    // open/close, incremental change, save.
    assert.equal(typeof caps.textDocumentSync, 'object', 'textDocumentSync is the options object');
    assert.equal(caps.textDocumentSync.openClose, true);
    assert.equal(caps.textDocumentSync.change, 2, 'TextDocumentSyncKind.Incremental');
    assert.ok(caps.textDocumentSync.save, 'save notifications requested');

    assert.ok(caps.executeCommandProvider, 'executeCommandProvider');
    for (const cmd of commands) {
      assert.ok(caps.executeCommandProvider.commands.includes(cmd), `command ${cmd} missing from ${JSON.stringify(caps.executeCommandProvider.commands)}`);
    }

    assert.equal(typeof caps.codeActionProvider, 'object', 'codeActionProvider lists its kinds');
    for (const kind of ['quickfix', 'refactor.rewrite', 'source.agentls']) {
      assert.ok(caps.codeActionProvider.codeActionKinds.includes(kind), `code action kind ${kind}`);
    }

    assert.equal(caps.workspace.workspaceFolders.supported, true);
    assert.ok(caps.workspace.workspaceFolders.changeNotifications, 'workspace folder change notifications');

    assert.equal(caps.positionEncoding, 'utf-16', 'a client offering only utf-16 gets utf-16');
    assert.deepEqual(caps.experimental && caps.experimental.agentls, { protocolVersion: 1 });

    const { result, status } = await c.shutdown();
    assert.equal(result, null);
    assert.equal(status.code, 0, 'exit after shutdown exits 0');
  });
});

test('agentls.discoverTools runs the discovery command of a trusted workspace', { timeout: 20000 }, async () => {
  const files = {
    'discover.sh': '#!/bin/sh\necho \'[{"functionDeclarations": [{"name": "project_lint", "description": "Lints.", "parametersJsonSchema": {"type": "object"}}]}]\'\n',
    '.agentls/settings.json': '{"tools": {"discoveryCommand": "sh discover.sh", "callCommand": "sh call.sh"}}',
  };
  await withClient({ files, env: { AGENTLS_TRUST_WORKSPACE: '1' } }, async (c) => {
    await c.initialize();
    const found = await c.request('workspace/executeCommand', { command: 'agentls.discoverTools', arguments: [{}] });
    assert.deepEqual(found.map((t) => [t.name, t.source]), [['project_lint', 'discovered']]);
    const list = await c.request('workspace/executeCommand', { command: 'agentls.listTools', arguments: [{ details: true }] });
    assert.ok(list.tools.some((t) => t.name === 'project_lint'), 'the discovered tool is listed');
    assert.equal(list.untrusted, undefined, 'a trusted workspace skips nothing');
    assert.deepEqual(await c.request('workspace/executeCommand', { command: 'agentls.mcpStatus', arguments: [{}] }), []);
    await c.shutdown();
  });
});

test('an untrusted workspace runs no discovery command and says why', { timeout: 20000 }, async () => {
  const files = {
    'discover.sh': '#!/bin/sh\ntouch ran\necho []\n',
    '.agentls/settings.json': '{"tools": {"discoveryCommand": "sh discover.sh", "callCommand": "sh call.sh"}}',
  };
  await withClient({ files }, async (c) => {
    await c.initialize();
    assert.deepEqual(await c.request('workspace/executeCommand', { command: 'agentls.discoverTools', arguments: [{}] }), []);
    const list = await c.request('workspace/executeCommand', { command: 'agentls.listTools', arguments: [{ details: true }] });
    assert.ok(list.untrusted, 'the untrusted note is there');
    assert.ok(list.untrusted.skipped.some((s) => s.startsWith('tools.discoveryCommand')), JSON.stringify(list.untrusted));
    assert.match(list.untrusted.hint, /agentls trust /);
    assert.ok(Array.isArray(await c.request('workspace/executeCommand', { command: 'agentls.listTools', arguments: [{}] })), 'without details the result stays a ToolInfo array');
    assert.equal(require('node:fs').existsSync(require('node:path').join(c.root, 'ran')), false, 'the discovery command did not run');
    await c.shutdown();
  });
});

test('position encoding negotiation', { timeout: 20000 }, async (t) => {
  const cases = [
    { offered: undefined, want: 'utf-16' },
    { offered: ['utf-16'], want: 'utf-16' },
    { offered: ['utf-8', 'utf-16'], want: 'utf-8' },
    { offered: ['utf-32', 'utf-16'], want: 'utf-32' },
    // LSP gives the list no order of preference; the server may pick either.
    { offered: ['utf-16', 'utf-8'], want: ['utf-16', 'utf-8'] },
  ];
  for (const tc of cases) {
    await t.test(`offered ${JSON.stringify(tc.offered)}`, async () => {
      await withClient({}, async (c) => {
        const caps = baseCapabilities();
        if (tc.offered === undefined) delete caps.general;
        else caps.general.positionEncodings = tc.offered;
        const res = await c.initialize({ capabilities: caps });
        // LSP lets a server omit positionEncoding to mean utf-16; the protocol asks for it.
        if (Array.isArray(tc.want)) assert.ok(tc.want.includes(res.capabilities.positionEncoding), `got ${res.capabilities.positionEncoding}`);
        else assert.equal(res.capabilities.positionEncoding, tc.want);
        await c.shutdown();
      });
    });
  }
});

test('a rich client gets the same initialize result', { timeout: 20000 }, async () => {
  await withClient({}, async (c) => {
    const res = await c.initialize({ experimental: richExperimental });
    assert.deepEqual(res.capabilities.experimental.agentls, { protocolVersion: 1 });
    assert.equal(res.serverInfo.name, 'agentls');
    await c.shutdown();
  });
});

test('exit without shutdown exits with code 1', { timeout: 20000 }, async () => {
  await withClient({}, async (c) => {
    await c.initialize();
    await c.notify('exit');
    const status = await c.exited;
    assert.equal(status.code, 1);
  });
});

test('a request after shutdown is refused with InvalidRequest', { timeout: 20000 }, async () => {
  await withClient({ files: { 'a.txt': 'x\n' } }, async (c) => {
    await c.initialize();
    assert.equal(await c.request('shutdown'), null);
    await assert.rejects(c.execute('agentls.listTools', {}), (err) => {
      assert.equal(err.code, -32600, `want InvalidRequest, got ${err.code}: ${err.message}`);
      return true;
    });
    await c.notify('exit');
    assert.equal((await c.exited).code, 0);
  });
});
