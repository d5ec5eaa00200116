// The live output of tool calls in a pseudo-terminal, opened on request ("agentls: Show
// Tool Output in a Terminal"): what ran before it opened is replayed, then each chunk is
// written as it arrives.
import * as vscode from 'vscode';

const keep = 256 * 1024;

export class ToolTerminal implements vscode.Disposable {
  private backlog = '';
  private lastCall: string | undefined;
  private terminal: vscode.Terminal | undefined;
  private writer = new vscode.EventEmitter<string>();
  private open = false;
  private closeListener: vscode.Disposable;

  constructor() {
    this.closeListener = vscode.window.onDidCloseTerminal((t) => {
      if (t === this.terminal) {
        this.terminal = undefined;
        this.open = false;
      }
    });
  }

  dispose(): void {
    this.closeListener.dispose();
    this.terminal?.dispose();
    this.writer.dispose();
  }

  /** A call started: its heading. */
  start(id: string, title: string): void {
    this.write(`\x1b[1m▶ ${title}\x1b[0m  \x1b[2m(${id})\x1b[0m\r\n`);
    this.lastCall = id;
  }

  /** A chunk of a call's output. */
  output(id: string, chunk: string): void {
    if (this.lastCall !== id) {
      this.write(`\x1b[2m── ${id}\x1b[0m\r\n`);
      this.lastCall = id;
    }
    this.write(chunk.replace(/\r?\n/g, '\r\n'));
  }

  /** A call ended. */
  end(id: string, status: string): void {
    const color = status === 'completed' ? '32' : status === 'cancelled' ? '33' : '31';
    this.write(`\r\n\x1b[${color}m■ ${status}\x1b[0m  \x1b[2m(${id})\x1b[0m\r\n`);
    this.lastCall = undefined;
  }

  show(): void {
    if (!this.terminal) {
      const pty: vscode.Pseudoterminal = {
        onDidWrite: this.writer.event,
        open: () => {
          this.open = true;
          this.writer.fire(this.backlog || '\x1b[2mThe output of agentls tool calls appears here.\x1b[0m\r\n');
        },
        close: () => {
          this.open = false;
          this.terminal = undefined;
        },
      };
      this.terminal = vscode.window.createTerminal({ name: 'agentls tools', pty, iconPath: new vscode.ThemeIcon('tools') });
    }
    this.terminal.show(true);
  }

  private write(s: string): void {
    this.backlog += s;
    if (this.backlog.length > keep) {
      this.backlog = this.backlog.slice(this.backlog.length - keep);
    }
    if (this.open) {
      this.writer.fire(s);
    }
  }
}
