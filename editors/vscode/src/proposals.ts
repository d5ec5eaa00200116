// The two sides of an edit confirmation's diff: the current text (read-only,
// agentls-original:) and the proposal (agentls-proposal:, an in-memory file the user can
// edit). A URI is /<key>/<the file's path> (the key a short name of the confirmation),
// so that VS Code picks the language from the file name.
import * as vscode from 'vscode';

export const originalScheme = 'agentls-original';
export const proposalScheme = 'agentls-proposal';

export function sideUri(scheme: string, key: string, filePath: string): vscode.Uri {
  const p = filePath.startsWith('/') ? filePath : '/' + filePath;
  return vscode.Uri.from({ scheme, path: `/${encodeURIComponent(key)}${p}` });
}

/** The key of a side's URI. */
export function idOf(uri: vscode.Uri): string | undefined {
  if (uri.scheme !== originalScheme && uri.scheme !== proposalScheme) {
    return undefined;
  }
  const seg = uri.path.split('/')[1];
  return seg ? decodeURIComponent(seg) : undefined;
}

/** The read-only current text of edits under review. */
export class OriginalProvider implements vscode.TextDocumentContentProvider {
  private texts = new Map<string, string>();
  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
  }
  delete(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}

/**
 * The proposals: an in-memory file system holding one file per edit under review.
 * Saving a proposal (Ctrl+S) calls onSave, which accepts it as the user's version.
 */
export class ProposalFs implements vscode.FileSystemProvider {
  private files = new Map<string, { data: Uint8Array; mtime: number; ctime: number }>();
  private emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  onSave: ((uri: vscode.Uri, text: string) => void) | undefined;

  set(uri: vscode.Uri, text: string): void {
    const now = Date.now();
    this.files.set(uri.toString(), { data: new TextEncoder().encode(text), mtime: now, ctime: now });
  }
  remove(uri: vscode.Uri): void {
    this.files.delete(uri.toString());
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(uri.toString());
    if (!f) {
      // The directories above a proposal exist for VS Code's sake.
      if ([...this.files.keys()].some((k) => k.startsWith(uri.toString() + '/'))) {
        return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
      }
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return { type: vscode.FileType.File, ctime: f.ctime, mtime: f.mtime, size: f.data.byteLength };
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(uri.toString());
    if (!f) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return f.data;
  }
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const f = this.files.get(uri.toString());
    if (!f) {
      throw vscode.FileSystemError.NoPermissions('this proposal is no longer under review');
    }
    f.data = content;
    f.mtime = Date.now();
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    this.onSave?.(uri, new TextDecoder().decode(content));
  }
  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}
