// #file mentions in a prompt: "#file:src/a.go" (or "#file:`path with spaces`") names a
// workspace file whose current text is sent with the prompt. No vscode import.

export interface Mention {
  /** The path as written. */
  path: string;
  start: number;
  end: number;
}

const mentionRe = /(^|\s)#file:(?:`([^`]+)`|(\S+))/g;

/** The mentions of text, in order (trailing punctuation is not part of a path). */
export function parseMentions(text: string): Mention[] {
  const out: Mention[] = [];
  for (const m of text.matchAll(mentionRe)) {
    let p = m[2] ?? m[3] ?? '';
    if (m[3] !== undefined) {
      p = p.replace(/[.,;:!?)\]]+$/, '');
    }
    if (p === '') {
      continue;
    }
    const start = (m.index ?? 0) + m[1].length;
    out.push({ path: p, start, end: start + '#file:'.length + (m[2] !== undefined ? p.length + 2 : p.length) });
  }
  return out;
}

/** How a path is written in a mention. */
export function mentionFor(path: string): string {
  return /\s/.test(path) ? `#file:\`${path}\`` : `#file:${path}`;
}

/** Longest file text attached to a prompt; longer files are cut with a note. */
export const maxAttached = 64 * 1024;

/**
 * The prompt with the mentioned files attached after it, each as a fenced block
 * headed by its path. files holds the resolved mentions: path (as the model should see
 * it, absolute) and text, or an error saying why it could not be read.
 */
export function withAttachments(prompt: string, files: { path: string; text?: string; error?: string }[]): string {
  if (files.length === 0) {
    return prompt;
  }
  const parts = [prompt, '', 'Files the user mentioned, as the editor holds them:'];
  for (const f of files) {
    if (f.text === undefined) {
      parts.push('', `${f.path}: ${f.error ?? 'could not be read'}`);
      continue;
    }
    let text = f.text;
    let note = '';
    if (text.length > maxAttached) {
      text = text.slice(0, maxAttached);
      note = `\n(cut at ${maxAttached} characters; read the file for the rest)`;
    }
    const fence = text.includes('```') ? '````' : '```';
    parts.push('', `${f.path}:`, fence, text.replace(/\n$/, ''), fence + note);
  }
  return parts.join('\n');
}

/** An entry of agentls.listPrompts: an MCP prompt, or a custom command (command set). */
export interface PromptEntry {
  server?: string;
  name?: string;
  description?: string;
  command?: string;
}

/**
 * The custom commands of list whose slash command starts with "/" + query, sorted: what
 * the prompt box offers while its first word starts with "/". MCP prompts are left out
 * (the chat sends prompts as text, which agentls expands for custom commands only).
 */
export function commandSuggestions(list: PromptEntry[], query: string): { command: string; description: string }[] {
  const want = '/' + query.toLowerCase();
  return (Array.isArray(list) ? list : [])
    .filter((p) => typeof p?.command === 'string' && p.command.toLowerCase().startsWith(want))
    .map((p) => ({ command: p.command as string, description: p.description ?? '' }))
    .sort((a, b) => a.command.localeCompare(b.command));
}
