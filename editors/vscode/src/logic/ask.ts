// The questions of an ask_user confirmation (the model's ask_user, or an MCP server's
// form that agentls turns into one) as VS Code's quick input asks them, and the answer
// they make. One question after another: a single choice and yes/no are a quick pick, a
// choice of several a quick pick with canPickMany, free text an input box. The answers
// are what the Neovim and Emacs front ends send: by question index ("0", "1", …), the
// chosen label (several joined with ", "), an empty answer left out; dismissing any
// question dismisses them all. No vscode import: unit tested under node.

import type { ConfirmAnswer, ConfirmDetails } from './confirm';

/** One question as the server sends it (Gemini CLI's ask_user question). */
export interface AskQuestion {
  question: string;
  header?: string;
  type?: 'choice' | 'text' | 'yesno' | string;
  options?: { label: string; description?: string }[];
  multiSelect?: boolean;
  placeholder?: string;
}

/** A quick pick item of a question. */
export interface PickItem {
  label: string;
  description?: string;
}

/** How one question is put: a quick pick (of one or several) or an input box. */
export type Step =
  | { kind: 'pick'; many: boolean; title: string; placeHolder: string; items: PickItem[] }
  | { kind: 'text'; title: string; prompt: string; placeHolder?: string };

/**
 * What the person did with a step: the label(s) picked or the text typed, or undefined
 * when they dismissed it (Escape).
 */
export type StepResult = string | string[] | undefined;

/** The labels the yes/no questions offer, as the server expects them back. */
export const yesNo = ['Yes', 'No'];

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * The questions of an ask_user confirmation, or an error saying what is wrong with
 * them (the call is then refused rather than answered with anything made up).
 */
export function questionsOf(d: ConfirmDetails): AskQuestion[] | Error {
  const qs = (d as { questions?: unknown }).questions;
  if (!Array.isArray(qs) || qs.length === 0) {
    return new Error('the ask_user confirmation carries no questions');
  }
  const out: AskQuestion[] = [];
  for (const [i, q] of qs.entries()) {
    if (!q || typeof q !== 'object' || typeof (q as AskQuestion).question !== 'string') {
      return new Error(`question ${i + 1} of the ask_user confirmation has no question text`);
    }
    out.push(q as AskQuestion);
  }
  return out;
}

/** The labels a question offers; none for a question that wants free text. */
export function labelsOf(q: AskQuestion): PickItem[] {
  if (q.type === 'yesno') {
    return yesNo.map((label) => ({ label }));
  }
  if (q.type === 'text' || !Array.isArray(q.options)) {
    return [];
  }
  const out: PickItem[] = [];
  for (const o of q.options) {
    if (o && typeof o.label === 'string' && o.label !== '') {
      const description = str(o.description);
      out.push(description ? { label: o.label, description } : { label: o.label });
    }
  }
  return out;
}

/** "Header: question", the line that names a question (in the quick input, on the card). */
export function questionLine(q: AskQuestion): string {
  const header = str(q.header) ?? '';
  return header !== '' ? `${header}: ${q.question}` : q.question;
}

/** The steps that put the questions of d, in order. */
export function steps(d: ConfirmDetails, qs: AskQuestion[]): Step[] {
  const what = str(d.title) && d.title !== '' ? d.title : 'Ask User';
  return qs.map((q, i) => {
    const title = `agentls: ${what}${qs.length > 1 ? ` (${i + 1}/${qs.length})` : ''}`;
    const items = labelsOf(q);
    // (An MCP form's default comes as the placeholder: "default: …".)
    const placeholder = str(q.placeholder);
    if (items.length > 0) {
      const many = q.multiSelect === true;
      return {
        kind: 'pick',
        many,
        title,
        placeHolder: `${questionLine(q)}${many ? ' (pick one or more)' : ''}${placeholder ? ` — ${placeholder}` : ''}`,
        items,
      };
    }
    return placeholder
      ? { kind: 'text', title, prompt: questionLine(q), placeHolder: placeholder }
      : { kind: 'text', title, prompt: questionLine(q) };
  });
}

/**
 * The answer a step's result makes: the label or text ('' for none), the labels of
 * several joined with ", " (as the server splits them); null when it was dismissed.
 * A label that the step did not offer is refused (null), never passed on.
 */
export function answerOf(step: Step, result: StepResult): string | null {
  if (result === undefined) {
    return null;
  }
  if (step.kind === 'text') {
    return typeof result === 'string' ? result : null;
  }
  const picked = Array.isArray(result) ? result : [result];
  if (!step.many && picked.length > 1) {
    return null;
  }
  const offered = new Set(step.items.map((i) => i.label));
  if (!picked.every((l) => typeof l === 'string' && offered.has(l))) {
    return null;
  }
  // In the order offered, whatever order they were picked in.
  return step.items
    .map((i) => i.label)
    .filter((l) => picked.includes(l))
    .join(', ');
}

/**
 * Puts the questions of d one after another through ask, and returns the answer to the
 * confirmation: proceed_once with the answers (an empty one left out), or cancel as
 * soon as one question is dismissed, which dismisses them all, or when stopped()
 * says the confirmation was answered another way meanwhile.
 */
export async function askAll(
  d: ConfirmDetails,
  ask: (step: Step, index: number) => Promise<StepResult>,
  stopped: () => boolean = () => false,
): Promise<ConfirmAnswer> {
  const qs = questionsOf(d);
  if (qs instanceof Error) {
    throw qs;
  }
  const answers: Record<string, string> = {};
  for (const [i, step] of steps(d, qs).entries()) {
    if (stopped()) {
      return { outcome: 'cancel' };
    }
    const a = answerOf(step, await ask(step, i));
    if (a === null || stopped()) {
      return { outcome: 'cancel' };
    }
    if (a !== '') {
      answers[String(i)] = a;
    }
  }
  return { outcome: 'proceed_once', answers };
}

/** The lines a tool card shows for the questions of a call's arguments (rawInput). */
export function cardQuestions(rawInput: unknown): string[] | undefined {
  const qs = rawInput && typeof rawInput === 'object' ? (rawInput as { questions?: unknown }).questions : undefined;
  if (!Array.isArray(qs)) {
    return undefined;
  }
  const out: string[] = [];
  for (const q of qs) {
    if (q && typeof q === 'object' && typeof (q as AskQuestion).question === 'string') {
      out.push(questionLine(q as AskQuestion));
    }
  }
  return out.length > 0 ? out : undefined;
}

/**
 * The answers as a card shows them, from the call's result ("**User answered:**" and
 * "Header → answer" lines, Markdown): the emphasis markers dropped, as the card shows
 * plain text.
 */
export function plainAnswers(text: string): string {
  return text.replace(/\*\*([^*\n]+)\*\*/g, '$1');
}
