// The chat webview: renders the items the extension sends (Markdown arrives as HTML
// rendered by markdown-it with raw HTML off; everything else is built with textContent)
// and sends back what the user does.
// @ts-check
(function () {
  // @ts-ignore acquireVsCodeApi is injected by VS Code
  const vscode = acquireVsCodeApi();
  const log = /** @type {HTMLElement} */ (document.getElementById('log'));
  const empty = /** @type {HTMLElement} */ (document.getElementById('empty'));
  const prompt = /** @type {HTMLTextAreaElement} */ (document.getElementById('prompt'));
  const send = /** @type {HTMLButtonElement} */ (document.getElementById('send'));
  const cancel = /** @type {HTMLButtonElement} */ (document.getElementById('cancel'));
  const context = /** @type {HTMLElement} */ (document.getElementById('context'));
  const chip = /** @type {HTMLButtonElement} */ (document.getElementById('context-chip'));
  const contextLabel = /** @type {HTMLElement} */ (document.getElementById('context-label'));
  const filesBox = /** @type {HTMLElement} */ (document.getElementById('files'));

  /** @type {HTMLElement[]} */
  let nodes = [];
  let running = false;
  let contextOn = true;
  /** Whether the view follows the end (the user has not scrolled up). */
  let follow = true;

  const statusIcon = {
    pending: 'circle-outline',
    awaiting_approval: 'bell-dot',
    in_progress: 'loading codicon-modifier-spin',
    completed: 'pass',
    failed: 'error',
    cancelled: 'circle-slash',
  };
  const statusWord = {
    pending: 'pending',
    awaiting_approval: 'awaiting approval',
    in_progress: 'running',
    completed: 'done',
    failed: 'failed',
    cancelled: 'cancelled',
  };
  const kindIcon = {
    read: 'file',
    edit: 'edit',
    delete: 'trash',
    move: 'arrow-swap',
    search: 'search',
    execute: 'terminal',
    think: 'checklist',
    fetch: 'globe',
    other: 'tools',
  };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function icon(name) {
    return el('span', 'codicon codicon-' + name);
  }

  function renderUser(item) {
    const box = el('div', 'item user');
    box.appendChild(el('div', 'who', 'You'));
    box.appendChild(el('div', 'text', item.text));
    if (item.context) {
      const c = el('div', 'ctx');
      c.appendChild(icon('file'));
      c.appendChild(el('span', '', ' ' + item.context));
      box.appendChild(c);
    }
    return box;
  }

  function renderMarkdown(item) {
    const box = el('div', 'item ' + item.kind);
    if (item.kind === 'thought') {
      if (item.hidden) box.hidden = true;
      const d = el('details', 'thought-box');
      const s = el('summary', '');
      s.appendChild(icon('lightbulb'));
      s.appendChild(el('span', '', ' Thinking'));
      d.appendChild(s);
      const body = el('div', 'markdown');
      body.innerHTML = item.html; // markdown-it output, raw HTML disabled
      d.appendChild(body);
      box.appendChild(d);
      return box;
    }
    const body = el('div', 'markdown');
    body.innerHTML = item.html; // markdown-it output, raw HTML disabled
    box.appendChild(body);
    return box;
  }

  function renderDiff(text) {
    const pre = el('pre', 'diff');
    for (const line of String(text).split('\n')) {
      let cls = '';
      if (line.startsWith('+++') || line.startsWith('---')) cls = 'meta';
      else if (line.startsWith('@@')) cls = 'hunk';
      else if (line.startsWith('+')) cls = 'add';
      else if (line.startsWith('-')) cls = 'del';
      pre.appendChild(el('span', 'line ' + cls, line + '\n'));
    }
    return pre;
  }

  function renderTool(item, old) {
    const box = el('div', 'item tool status-' + item.status);
    box.dataset.id = item.id;
    box.dataset.status = item.status;
    const head = el('div', 'head');
    const st = el('span', 'status');
    st.appendChild(icon(statusIcon[item.status] || 'circle-outline'));
    st.title = statusWord[item.status] || item.status;
    head.appendChild(st);
    head.appendChild(icon(kindIcon[item.toolKind] || 'tools'));
    head.appendChild(el('span', 'title', ' ' + item.title));
    head.appendChild(el('span', 'state', statusWord[item.status] || item.status));
    box.appendChild(head);
    if (item.locations && item.locations.length > 0) {
      const locs = el('div', 'locations');
      for (const l of item.locations) {
        const a = el('a', 'loc', l.label);
        a.href = '#';
        a.title = 'Open ' + l.label;
        a.addEventListener('click', (ev) => {
          ev.preventDefault();
          vscode.postMessage({ type: 'open', uri: l.uri, line: l.line });
        });
        locs.appendChild(a);
      }
      box.appendChild(locs);
    }
    if (item.questions) {
      // ask_user: its questions, and once answered the answers, always in view.
      const ul = el('ul', 'questions');
      for (const line of item.questions) ul.appendChild(el('li', '', line));
      box.appendChild(ul);
      if (item.answers) box.appendChild(el('pre', 'answers', item.answers));
    }
    if (item.confirm) {
      const q = el('div', 'confirm');
      q.appendChild(el('div', 'question', item.confirm.question));
      if (item.confirm.note) q.appendChild(el('div', 'note', item.confirm.note));
      const row = el('div', 'choices');
      if (item.confirm.type === 'edit') {
        const r = el('button', 'secondary', 'Review diff');
        r.addEventListener('click', () => vscode.postMessage({ type: 'review', id: item.confirm.id }));
        row.appendChild(r);
      }
      for (const c of item.confirm.choices) {
        const b = el('button', c.reject ? 'secondary' : '', c.label);
        b.dataset.choice = c.id;
        b.dataset.outcome = c.outcome;
        b.addEventListener('click', () => vscode.postMessage({ type: 'confirm', id: item.confirm.id, choice: c.id }));
        row.appendChild(b);
      }
      q.appendChild(row);
      box.appendChild(q);
    }
    if (item.output) {
      const wasOpen = old && old.querySelector('details.output') ? /** @type {HTMLDetailsElement} */ (old.querySelector('details.output')).open : true;
      const d = /** @type {HTMLDetailsElement} */ (el('details', 'output'));
      d.open = item.final ? wasOpen && item.status !== 'completed' ? true : wasOpen : true;
      const s = el('summary', '', 'Output' + (item.outputTruncated ? ' (latest part)' : ''));
      d.appendChild(s);
      const pre = el('pre', 'out', item.output);
      d.appendChild(pre);
      box.appendChild(d);
      requestAnimationFrame(() => (pre.scrollTop = pre.scrollHeight));
    }
    if (item.diff) {
      const d = el('details', 'diffbox');
      d.appendChild(el('summary', '', 'Diff'));
      d.appendChild(renderDiff(item.diff));
      box.appendChild(d);
    } else if (item.text && item.final && !item.output && !(item.toolKind === 'read' && item.locations.length > 0)) {
      // (A read of a file leaves its text out: the file is a click away. Other reads,
      // such as an MCP server's tools, show what they returned.)
      const d = el('details', 'result');
      d.appendChild(el('summary', '', 'Result'));
      d.appendChild(el('pre', 'out', item.text));
      box.appendChild(d);
    }
    if (item.error) {
      box.appendChild(el('div', 'error', item.error));
    }
    return box;
  }

  function renderPlan(item) {
    const box = el('div', 'item plan');
    const h = el('div', 'head');
    h.appendChild(icon('checklist'));
    h.appendChild(el('span', 'title', ' Plan'));
    box.appendChild(h);
    const ul = el('ul', '');
    for (const e of item.entries) {
      const li = el('li', 'entry ' + e.status);
      li.appendChild(icon(e.status === 'completed' ? 'pass-filled' : e.status === 'in_progress' ? 'circle-large-filled' : e.status === 'cancelled' ? 'circle-slash' : e.status === 'blocked' ? 'warning' : 'circle-large-outline'));
      li.appendChild(el('span', '', ' ' + e.content));
      ul.appendChild(li);
    }
    box.appendChild(ul);
    return box;
  }

  function renderNote(item) {
    const box = el('div', 'item note ' + item.level);
    box.appendChild(icon(item.level === 'error' ? 'error' : item.level === 'warning' ? 'warning' : 'info'));
    box.appendChild(el('span', '', ' ' + item.text));
    return box;
  }

  function render(item, old) {
    switch (item.kind) {
      case 'user':
        return renderUser(item);
      case 'message':
      case 'thought':
        return renderMarkdown(item);
      case 'tool':
        return renderTool(item, old);
      case 'plan':
        return renderPlan(item);
      default:
        return renderNote(item);
    }
  }

  function setItem(index, item) {
    const old = nodes[index];
    const node = render(item, old);
    node.dataset.index = String(index);
    if (old) {
      log.replaceChild(node, old);
    } else {
      log.appendChild(node);
    }
    nodes[index] = node;
    empty.hidden = nodes.length > 0;
  }

  function scrollEnd() {
    if (follow) window.scrollTo(0, document.body.scrollHeight);
  }
  window.addEventListener('scroll', () => {
    follow = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  });

  function setRunning(r) {
    running = r;
    document.body.classList.toggle('running', r);
    cancel.hidden = !r;
    send.hidden = r;
  }

  // Links in answers: opened by the extension (external or workspace files).
  log.addEventListener('click', (ev) => {
    const a = /** @type {HTMLElement} */ (ev.target).closest('a');
    if (a && a.getAttribute('href') && !a.classList.contains('loc')) {
      ev.preventDefault();
      vscode.postMessage({ type: 'link', href: a.getAttribute('href') });
    }
  });

  function submit() {
    const text = prompt.value.trim();
    if (!text || running) return;
    vscode.postMessage({ type: 'send', text, useContext: contextOn });
    prompt.value = '';
    hideFiles();
    follow = true;
  }

  // #file mentions: a list of workspace files while a "#..." word is typed; custom
  // commands: a list of them while the prompt's first word starts with "/".
  let mentionStart = -1;
  let fileItems = [];
  let fileSel = 0;
  function hideFiles() {
    filesBox.hidden = true;
    mentionStart = -1;
    fileItems = [];
  }
  function currentMention() {
    const pos = prompt.selectionStart;
    const before = prompt.value.slice(0, pos);
    const c = /^\/(\S*)$/.exec(before);
    if (c) return { start: 0, query: c[1], command: true };
    const m = /(^|\s)#(?:file:)?([^\s#]*)$/.exec(before);
    if (!m) return null;
    return { start: pos - m[0].length + m[1].length, query: m[2] };
  }
  function showFiles(files) {
    fileItems = files;
    fileSel = 0;
    filesBox.textContent = '';
    if (files.length === 0) {
      filesBox.hidden = true;
      return;
    }
    files.forEach((f, i) => {
      const row = el('div', 'file' + (i === fileSel ? ' selected' : ''));
      row.appendChild(icon(f.icon || 'file'));
      row.appendChild(el('span', '', ' ' + f.path));
      if (f.detail) row.appendChild(el('span', 'detail', ' ' + f.detail));
      row.addEventListener('mousedown', (ev) => {
        ev.preventDefault();
        pickFile(i);
      });
      filesBox.appendChild(row);
    });
    filesBox.hidden = false;
  }
  function pickFile(i) {
    const f = fileItems[i];
    const m = currentMention();
    if (!f || !m) return hideFiles();
    const pos = prompt.selectionStart;
    prompt.value = prompt.value.slice(0, m.start) + f.insert + ' ' + prompt.value.slice(pos);
    const at = m.start + f.insert.length + 1;
    prompt.setSelectionRange(at, at);
    hideFiles();
    prompt.focus();
  }
  prompt.addEventListener('input', () => {
    const m = currentMention();
    if (!m) return hideFiles();
    mentionStart = m.start;
    vscode.postMessage({ type: m.command ? 'commands' : 'files', query: m.query });
  });
  prompt.addEventListener('keydown', (ev) => {
    if (!filesBox.hidden && fileItems.length > 0) {
      if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
        ev.preventDefault();
        fileSel = (fileSel + (ev.key === 'ArrowDown' ? 1 : fileItems.length - 1)) % fileItems.length;
        [...filesBox.children].forEach((c, i) => c.classList.toggle('selected', i === fileSel));
        return;
      }
      if (ev.key === 'Enter' || ev.key === 'Tab') {
        ev.preventDefault();
        pickFile(fileSel);
        return;
      }
      if (ev.key === 'Escape') {
        ev.preventDefault();
        hideFiles();
        return;
      }
    }
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      submit();
    } else if (ev.key === 'Escape' && running) {
      vscode.postMessage({ type: 'cancel' });
    }
  });
  send.addEventListener('click', submit);
  cancel.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
  chip.addEventListener('click', () => vscode.postMessage({ type: 'toggleContext' }));

  window.addEventListener('message', (ev) => {
    const m = ev.data;
    switch (m.type) {
      case 'reset':
        log.textContent = '';
        nodes = [];
        m.items.forEach((it, i) => setItem(i, it));
        empty.hidden = nodes.length > 0;
        follow = true;
        scrollEnd();
        break;
      case 'item':
        setItem(m.index, m.item);
        scrollEnd();
        break;
      case 'state':
        setRunning(m.running);
        if (m.context) {
          contextOn = m.context.enabled;
          context.hidden = false;
          contextLabel.textContent = ' ' + m.context.label;
          chip.classList.toggle('off', !m.context.enabled);
          chip.title = m.context.enabled
            ? 'Sent with the prompt as context; click to leave it out'
            : 'Left out of the prompt; click to send it as context';
        } else {
          context.hidden = true;
        }
        break;
      case 'files':
        if (mentionStart >= 0) showFiles(m.files);
        break;
      case 'draft':
        prompt.value = m.text;
        prompt.focus();
        break;
    }
  });
  vscode.postMessage({ type: 'ready' });
  document.body.dataset.ready = '1';
  prompt.focus();
})();
