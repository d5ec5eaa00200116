// Test-only probe for the end-to-end tests: every 100 ms it writes what VS Code holds —
// the file documents (text, version, dirty), the tabs, the agentls diagnostics, and
// agentls's exported state — to $AGENTLS_PROBE_FILE (atomically), so the tests read
// exact text instead of scraping the DOM for it.
'use strict';
const vscode = require('vscode');
const fs = require('node:fs');

function snapshot() {
  const api = vscode.extensions.getExtension('agentls.agentls');
  let agentls = null;
  try {
    agentls = api && api.isActive && api.exports ? api.exports.state() : null;
  } catch (err) {
    agentls = { error: String(err) };
  }
  const tabs = [];
  for (const g of vscode.window.tabGroups.all) {
    for (const t of g.tabs) {
      const inp = t.input;
      tabs.push({
        label: t.label,
        active: t.isActive && g.isActive,
        dirty: t.isDirty,
        kind: inp instanceof vscode.TabInputTextDiff ? 'diff' : inp instanceof vscode.TabInputText ? 'text' : 'other',
        uri: inp && inp.uri ? inp.uri.toString() : inp && inp.modified ? inp.modified.toString() : undefined,
        original: inp && inp.original ? inp.original.toString() : undefined,
      });
    }
  }
  const diagnostics = [];
  for (const [uri, list] of vscode.languages.getDiagnostics()) {
    for (const d of list) {
      diagnostics.push({ uri: uri.toString(), source: d.source, message: d.message, severity: d.severity, line: d.range.start.line });
    }
  }
  return {
    time: Date.now(),
    // The extension host's: a reloaded window has a new one.
    pid: process.pid,
    documents: vscode.workspace.textDocuments
      .filter((d) => d.uri.scheme === 'file' || d.uri.scheme === 'agentls-proposal' || d.uri.scheme === 'agentls-turn')
      .map((d) => ({ uri: d.uri.toString(), path: d.uri.fsPath, scheme: d.uri.scheme, languageId: d.languageId, text: d.getText(), version: d.version, dirty: d.isDirty })),
    activeEditor: vscode.window.activeTextEditor ? vscode.window.activeTextEditor.document.uri.toString() : null,
    tabs,
    diagnostics,
    agentls,
  };
}

function activate(context) {
  const file = process.env.AGENTLS_PROBE_FILE;
  if (!file) {
    return;
  }
  const timer = setInterval(() => {
    try {
      fs.writeFileSync(file + '.tmp', JSON.stringify(snapshot()));
      fs.renameSync(file + '.tmp', file);
    } catch {
      // the next tick tries again
    }
  }, 100);
  context.subscriptions.push({ dispose: () => clearInterval(timer) });
  // For the benchmark: N prompts through agentls's API, each timed from the call to its
  // PromptResult, and the extension host's memory, written to $AGENTLS_PROBE_FILE.bench.
  context.subscriptions.push(
    vscode.commands.registerCommand('agentlsProbe.bench', async () => {
      const api = vscode.extensions.getExtension('agentls.agentls').exports;
      const rounds = [];
      for (let i = 0; i < 5; i++) {
        const t = process.hrtime.bigint();
        const res = await api.prompt(`ping ${i}`);
        rounds.push({ ms: Number(process.hrtime.bigint() - t) / 1e6, stopReason: res && res.stopReason });
      }
      const mem = process.memoryUsage();
      fs.writeFileSync(file + '.bench', JSON.stringify({ readyMs: api.state().readyMs, rounds, rss: mem.rss, heapUsed: mem.heapUsed, pid: process.pid }));
    }),
  );
}

module.exports = { activate, deactivate() {} };
