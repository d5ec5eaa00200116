// The turn commands: "agentls: Show Turn Diff" opens what a prompt of the chat's session
// changed (agentls.turnDiff) as a read-only diff document, each file headed by the calls
// that changed it — "# notes.txt: changed by run_shell_command: sed -i …" — marked, with
// a link to the file; "agentls: Undo Last Turn" and "agentls: Redo Turn" take it back and
// bring it back (agentls.undoTurn, agentls.redoTurn: text files in one workspace/applyEdit,
// one Ctrl+Z; the rest on disk), asking in a modal dialog where files changed since.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { changedQuestion, diffTitle, outline, refusedForChanges, TurnBack, turnBackMessage, TurnDiff } from './logic/turns';
import { Server } from './server';

export const turnScheme = 'agentls-turn';

export class TurnCommands implements vscode.Disposable {
  private texts = new Map<string, string>();
  private changed = new vscode.EventEmitter<vscode.Uri>();
  private disposables: vscode.Disposable[] = [];
  private byDecoration = vscode.window.createTextEditorDecorationType({
    fontWeight: 'bold',
    color: new vscode.ThemeColor('textLink.foreground'),
  });
  private warnDecoration = vscode.window.createTextEditorDecorationType({
    color: new vscode.ThemeColor('editorWarning.foreground'),
    fontWeight: 'bold',
  });
  /** The last result of each command, for the extension's exported state. */
  last: { diff?: TurnDiff; undo?: TurnBack; redo?: TurnBack; message?: string } = {};

  constructor(
    private server: Server,
    private session: () => string | undefined,
    private log: (msg: string) => void,
  ) {
    const texts = this.texts;
    this.disposables.push(
      this.changed,
      this.byDecoration,
      this.warnDecoration,
      vscode.workspace.registerTextDocumentContentProvider(turnScheme, {
        onDidChange: this.changed.event,
        provideTextDocumentContent: (uri) => texts.get(uri.toString()) ?? '',
      }),
      vscode.languages.registerDocumentLinkProvider({ scheme: turnScheme }, { provideDocumentLinks: (doc) => this.links(doc) }),
      vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.decorate(e))),
    );
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }

  private root(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  /** Paths as the user reads them: relative to the workspace. */
  private names = (paths: string[]): string[] => {
    const root = this.root();
    return paths.map((p) => (root && p.startsWith(root + path.sep) ? path.relative(root, p) : p));
  };

  private target(session?: string): string | undefined {
    const s = session ?? this.session();
    if (!s) {
      void vscode.window.showWarningMessage('agentls: no chat session yet: ask agentls first, or resume a session.');
    }
    return s;
  }

  /** agentls: Show Turn Diff. */
  async showDiff(turn?: number, session?: string): Promise<TurnDiff | undefined> {
    const s = this.target(session);
    if (!s) {
      return undefined;
    }
    let d: TurnDiff;
    try {
      d = await this.server.request<TurnDiff>('workspace/executeCommand', {
        command: 'agentls.turnDiff',
        arguments: [{ session: s, turn }],
      });
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: the turn diff failed: ${errText(err)}`);
      return undefined;
    }
    this.last.diff = d;
    if (!d || typeof d.diff !== 'string' || d.diff === '') {
      void vscode.window.showInformationMessage('agentls: that prompt changed no file.');
      return d;
    }
    // The name says the prompt; .diff gives the diff language.
    const uri = vscode.Uri.from({ scheme: turnScheme, path: `/${diffTitle(d)}.diff`, query: `session=${encodeURIComponent(s)}&turn=${d.turn}` });
    this.texts.set(uri.toString(), d.diff);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    if (doc.languageId !== 'diff') {
      await vscode.languages.setTextDocumentLanguage(doc, 'diff');
    }
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    this.decorate(editor);
    return d;
  }

  /** Marks the "# " lines of a turn diff: each file's calls, and what was left out. */
  private decorate(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== turnScheme) {
      return;
    }
    const o = outline(editor.document.getText());
    const by = o.files.map((f) => {
      const text = editor.document.lineAt(f.line).text;
      return { range: new vscode.Range(f.line, 2 + f.rel.length + 2, f.line, text.length), hoverMessage: `${f.rel}: ${f.by}` };
    });
    editor.setDecorations(this.byDecoration, by);
    editor.setDecorations(
      this.warnDecoration,
      o.warnings.map((l) => editor.document.lineAt(l).range),
    );
  }

  /** Each file's name in its header links to the file. */
  private links(doc: vscode.TextDocument): vscode.DocumentLink[] {
    const root = this.root();
    if (!root) {
      return [];
    }
    return outline(doc.getText()).files.map((f) => {
      const link = new vscode.DocumentLink(new vscode.Range(f.line, 2, f.line, 2 + f.rel.length), vscode.Uri.file(path.join(root, f.rel)));
      link.tooltip = `Open ${f.rel}`;
      return link;
    });
  }

  /** agentls: Undo Last Turn (redo false) and agentls: Redo Turn (redo true). */
  async turnBack(redo: boolean, opts: { force?: boolean; turn?: number; session?: string } = {}): Promise<TurnBack | undefined> {
    const s = this.target(opts.session);
    if (!s) {
      return undefined;
    }
    const verb = redo ? 'redo' : 'undo';
    let r: TurnBack;
    try {
      r = await this.server.request<TurnBack>('workspace/executeCommand', {
        command: redo ? 'agentls.redoTurn' : 'agentls.undoTurn',
        arguments: [{ session: s, turn: opts.turn, force: opts.force || undefined }],
      });
    } catch (err) {
      this.last.message = `agentls: ${verb} failed: ${errText(err)}`;
      void vscode.window.showErrorMessage(this.last.message);
      return undefined;
    }
    this.last[verb] = r;
    if (!opts.force && refusedForChanges(r)) {
      const q = changedQuestion(r, redo, this.names(r.changed ?? []));
      this.last.message = q.message;
      const pick = await vscode.window.showWarningMessage(q.message, { modal: true }, q.force);
      if (pick === q.force) {
        return this.turnBack(redo, { force: true, turn: r.turn, session: s });
      }
      return r;
    }
    const m = turnBackMessage(r, redo, this.names);
    this.last.message = m.text;
    this.log(m.text);
    void (m.warning ? vscode.window.showWarningMessage(m.text) : vscode.window.showInformationMessage(m.text));
    return r;
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
