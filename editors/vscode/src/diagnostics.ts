// The editor's diagnostics for the agent (docs/protocol.md, "The editor's diagnostics"):
// the extension declares experimental.agentls.diagnostics and answers the server's
// agentls/collectDiagnostics with agentls/diagnostics, the diagnostics VS Code holds for
// the documents asked about (languages.getDiagnostics: every language server and
// linter), agentls's own left out. Asked to settle, it waits until the diagnostics of
// those documents have not changed for a short quiet period, at the latest a little
// before the wait the server gives (agentls.diagnostics.waitMs, 2 s by default).
import * as vscode from 'vscode';

/** How long the diagnostics must stay unchanged once they changed after an edit, unless
 * agentls.diagnostics.quietMs says otherwise. */
export const quietMs = 200;

/** The quiet period of the user's settings. */
function quietPeriod(): number {
  const q = vscode.workspace.getConfiguration('agentls').get<number>('diagnostics.quietMs', quietMs);
  return typeof q === 'number' && q >= 0 ? q : quietMs;
}
/** How long to wait for a first change before taking the diagnostics as they are. */
export const idleMs = 1000;
/** How much sooner than the server's wait the report is sent, for the trip. */
export const marginMs = 150;

/** The capability to declare, or undefined when the user turned it off. */
export function diagnosticsCapability(): { waitMs: number } | undefined {
  const c = vscode.workspace.getConfiguration('agentls');
  if (c.get<boolean>('diagnostics.enabled', true) === false) return undefined;
  const wait = c.get<number>('diagnostics.waitMs', 2000);
  return { waitMs: typeof wait === 'number' && wait >= 0 ? wait : 2000 };
}

export interface CollectParams {
  id: string;
  uris?: string[];
  settle?: boolean;
  reload?: boolean;
  waitMs?: number;
}

const severities: Record<number, number> = {
  [vscode.DiagnosticSeverity.Error]: 1,
  [vscode.DiagnosticSeverity.Warning]: 2,
  [vscode.DiagnosticSeverity.Information]: 3,
  [vscode.DiagnosticSeverity.Hint]: 4,
};

function own(d: vscode.Diagnostic): boolean {
  return d.source === 'agentls' || d.source === 'agentls/shell';
}

function toLsp(d: vscode.Diagnostic): Record<string, unknown> {
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  return {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity: severities[d.severity] ?? 1,
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined ? { code } : {}),
    message: d.message,
  };
}

/** The files of a report: those of uris, or every file VS Code has diagnostics for. */
export function files(uris: string[]): { uri: string; diagnostics: Record<string, unknown>[] }[] {
  if (uris.length === 0) {
    return vscode.languages
      .getDiagnostics()
      .filter(([u]) => u.scheme === 'file')
      .map(([u, ds]) => ({ uri: u.toString(), diagnostics: ds.filter((d) => !own(d)).map(toLsp) }));
  }
  return uris.map((uri) => ({
    uri,
    diagnostics: vscode.languages.getDiagnostics(vscode.Uri.parse(uri)).filter((d) => !own(d)).map(toLsp),
  }));
}

/**
 * Whether something may report diagnostics on one of the documents: VS Code names no
 * diagnostics providers, so any language but plain text counts, as does a document
 * that has diagnostics of another source than agentls already.
 */
function mayHaveSources(uris: Set<string>): boolean {
  for (const u of uris) {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === u);
    if (doc && doc.languageId !== 'plaintext') return true;
    if (vscode.languages.getDiagnostics(vscode.Uri.parse(u)).some((d) => !own(d))) return true;
  }
  return false;
}

/**
 * Answers one agentls/collectDiagnostics: send(report) is called once, at once without
 * settle, else when the documents' diagnostics have settled.
 */
export function collect(params: CollectParams, send: (report: unknown) => void): void {
  const uris = Array.isArray(params.uris) ? params.uris : [];
  const report = () => send({ id: params.id, files: files(uris) });
  if (!params.settle) {
    report();
    return;
  }
  const watched = new Set(uris.map((u) => vscode.Uri.parse(u).toString()));
  const start = Date.now();
  let deadline = start + Math.max((typeof params.waitMs === 'number' ? params.waitMs : 2000) - marginMs, 0);
  if (!mayHaveSources(watched)) {
    // Plain text nothing reports on: nothing to wait for.
    deadline = start;
  }
  const quiet = quietPeriod();
  let lastChange: number | undefined;
  const sub = vscode.languages.onDidChangeDiagnostics((e) => {
    if (e.uris.some((u) => watched.has(u.toString()))) lastChange = Date.now();
  });
  const timer = setInterval(() => {
    const now = Date.now();
    if (now >= deadline || (lastChange !== undefined && now - lastChange >= quiet) || (lastChange === undefined && now - start >= idleMs)) {
      clearInterval(timer);
      sub.dispose();
      report();
    }
  }, 20);
}

/**
 * The diagnostics of the lines from line1 to line2 (0-based) of uri, agentls's own left
 * out, as one text for a prompt ("fix this"); undefined when there are none.
 */
export function atLines(uri: vscode.Uri, line1: number, line2: number): string | undefined {
  const names = ['error', 'warning', 'info', 'hint'];
  const lines = vscode.languages
    .getDiagnostics(uri)
    .filter((d) => !own(d) && d.range.start.line >= line1 && d.range.start.line <= line2)
    .map((d) => {
      const sev = names[(severities[d.severity] ?? 1) - 1];
      return `line ${d.range.start.line + 1}: ${sev}: ${d.message}${d.source ? ` (${d.source})` : ''}`;
    });
  return lines.length > 0 ? lines.join('\n') : undefined;
}
