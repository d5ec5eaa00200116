// The chat's transcript as data: the items a conversation shows (the user's prompts,
// the answer's Markdown, thoughts, tool-call cards, the plan, notes) and how each
// agentls/update changes them. The view renders items; this module decides them. No
// vscode import: unit tested under node.

import { cardQuestions } from './ask';

export type ToolStatus = 'pending' | 'awaiting_approval' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

export interface Location {
  uri: string;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

export interface FileDiff {
  path?: string;
  uri?: string;
  diff?: string;
  originalContent?: string | null;
  newContent?: string;
}

export interface UserItem {
  kind: 'user';
  text: string;
  context?: string;
}
export interface TextItem {
  kind: 'message' | 'thought';
  text: string;
}
export interface ToolItem {
  kind: 'tool';
  id: string;
  name: string;
  title: string;
  toolKind: string;
  status: ToolStatus;
  locations: Location[];
  output: string;
  /** Whether output was cut at the front to stay under maxOutput. */
  outputTruncated: boolean;
  text?: string;
  diff?: FileDiff;
  error?: string;
  command?: string;
  /** ask_user's questions ("Header: question"), from the call's arguments. */
  questions?: string[];
}
export interface PlanItem {
  kind: 'plan';
  entries: { content: string; status: string }[];
}
export interface NoteItem {
  kind: 'note';
  text: string;
  level: 'info' | 'warning' | 'error';
}
export type ChatItem = UserItem | TextItem | ToolItem | PlanItem | NoteItem;

/** Output kept per tool card; the rest is in the terminal and the tool's result. */
export const maxOutput = 64 * 1024;

const finalStatuses: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
export function isFinal(status: string): boolean {
  return finalStatuses.has(status);
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  thoughtTokens?: number;
  totalTokens?: number;
}

export const stopReasonText: Record<string, string> = {
  end_turn: 'done',
  cancelled: 'cancelled',
  max_turn_requests: 'stopped: too many model turns',
  refusal: 'the model refused',
  error: 'failed',
};

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * One conversation: a session (once known) and its items. apply() takes an update
 * and returns the indexes of the items it added or changed.
 */
export class Transcript {
  items: ChatItem[] = [];
  session: string | undefined;
  title: string | undefined;
  private tools = new Map<string, number>();

  addUser(text: string, context?: string): number[] {
    if (this.title === undefined) {
      this.title = text.split('\n')[0].slice(0, 80);
    }
    return [this.push({ kind: 'user', text, context })];
  }

  addNote(text: string, level: NoteItem['level'] = 'info'): number[] {
    return [this.push({ kind: 'note', text, level })];
  }

  private push(item: ChatItem): number {
    this.items.push(item);
    return this.items.length - 1;
  }

  /** The tool card of a call, if the transcript shows it. */
  tool(id: string): ToolItem | undefined {
    const i = this.tools.get(id);
    return i === undefined ? undefined : (this.items[i] as ToolItem);
  }

  toolIndex(id: string): number | undefined {
    return this.tools.get(id);
  }

  /** The calls not yet ended. */
  openTools(): ToolItem[] {
    return [...this.tools.values()].map((i) => this.items[i] as ToolItem).filter((t) => !isFinal(t.status));
  }

  /**
   * Fills the transcript from a session's history (agentls.sessionHistory's updates):
   * the prompts, answers and tool calls as they were shown. Returns how many prompts
   * it held.
   */
  replay(updates: unknown[]): number {
    let prompts = 0;
    for (const u of updates) {
      if (u && typeof u === 'object' && !Array.isArray(u)) {
        const rec = u as Record<string, unknown>;
        if (rec.kind === 'user_message') {
          prompts++;
        }
        this.apply(rec);
      }
    }
    return prompts;
  }

  apply(update: Record<string, unknown>): number[] {
    switch (update.kind) {
      case 'message_chunk':
      case 'thought_chunk': {
        const kind = update.kind === 'message_chunk' ? 'message' : 'thought';
        const text = str(update.text) ?? '';
        if (text === '') {
          return [];
        }
        const last = this.items[this.items.length - 1];
        if (last && last.kind === kind) {
          last.text += text;
          return [this.items.length - 1];
        }
        return [this.push({ kind, text })];
      }
      case 'tool_call': {
        const id = str(update.toolCallId) ?? '';
        const existing = this.tools.get(id);
        const rawInput = update.rawInput as Record<string, unknown> | undefined;
        const item: ToolItem = {
          kind: 'tool',
          id,
          name: str(update.name) ?? '?',
          title: str(update.title) ?? str(update.name) ?? '?',
          toolKind: str(update.toolKind) ?? 'other',
          status: (str(update.status) as ToolStatus) ?? 'pending',
          locations: Array.isArray(update.locations) ? (update.locations as Location[]) : [],
          output: '',
          outputTruncated: false,
          command: rawInput && typeof rawInput.command === 'string' ? rawInput.command : undefined,
          questions: str(update.name) === 'ask_user' ? cardQuestions(rawInput) : undefined,
        };
        if (existing !== undefined) {
          const old = this.items[existing] as ToolItem;
          this.items[existing] = { ...item, output: old.output, outputTruncated: old.outputTruncated };
          return [existing];
        }
        const i = this.push(item);
        this.tools.set(id, i);
        return [i];
      }
      case 'tool_call_update': {
        const id = str(update.toolCallId) ?? '';
        const i = this.tools.get(id);
        if (i === undefined) {
          return [];
        }
        const t = this.items[i] as ToolItem;
        const status = str(update.status);
        if (status) {
          t.status = status as ToolStatus;
        }
        const out = str(update.output);
        if (out) {
          t.output += out;
          if (t.output.length > maxOutput) {
            t.output = t.output.slice(t.output.length - maxOutput);
            t.outputTruncated = true;
          }
        }
        const content = update.content as { diff?: FileDiff; text?: string } | undefined;
        if (content && typeof content === 'object') {
          if (content.diff && typeof content.diff === 'object') {
            t.diff = content.diff;
          }
          if (typeof content.text === 'string') {
            t.text = content.text;
          }
        }
        const err = update.error as { message?: string } | undefined;
        if (err && typeof err.message === 'string') {
          t.error = err.message;
        }
        return [i];
      }
      case 'plan': {
        const entries = Array.isArray(update.entries)
          ? (update.entries as { content?: unknown; status?: unknown }[]).map((e) => ({
              content: str(e?.content) ?? '',
              status: str(e?.status) ?? 'pending',
            }))
          : [];
        // One plan card per turn, updated in place while nothing else followed it.
        const last = this.items[this.items.length - 1];
        if (last && last.kind === 'plan') {
          last.entries = entries;
          return [this.items.length - 1];
        }
        return [this.push({ kind: 'plan', entries })];
      }
      case 'user_message':
        // A prompt of a resumed session's history (agentls.sessionHistory).
        return this.addUser(str(update.text) ?? '');
      case 'compression':
        return this.addNote(str(update.text) ?? 'The older part of the conversation was summarised.');
      case 'turn_end':
        // The prompt's answer (PromptResult) says how the turn ended; see end().
        return [];
      default:
        return [];
    }
  }

  /** Adds the note saying how a prompt ended. */
  end(stopReason: string, usage?: Usage, error?: string): number[] {
    const what = stopReasonText[stopReason] ?? stopReason;
    const tokens =
      usage && (usage.inputTokens || usage.outputTokens)
        ? ` · ${usage.inputTokens ?? 0} in / ${usage.outputTokens ?? 0} out tokens`
        : '';
    const level = stopReason === 'error' ? 'error' : stopReason === 'end_turn' ? 'info' : 'warning';
    return this.addNote(`${what}${error ? ': ' + error : ''}${tokens}`, level);
  }
}

/** "file.go:12" for a location, relative to the workspace root when inside it. */
export function locationLabel(loc: Location, rootPaths: string[]): string {
  let p = loc.uri;
  if (p.startsWith('file://')) {
    try {
      p = decodeURIComponent(new URL(p).pathname);
    } catch {
      // keep the URI
    }
  }
  for (const root of rootPaths) {
    const r = root.endsWith('/') ? root : root + '/';
    if (p.startsWith(r)) {
      p = p.slice(r.length);
      break;
    }
  }
  if (loc.range && typeof loc.range.start?.line === 'number') {
    p += `:${loc.range.start.line + 1}`;
  }
  return p;
}
