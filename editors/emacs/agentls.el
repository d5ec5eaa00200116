;;; agentls.el --- The agentls coding agent beside your language server  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The agentls authors

;; Author: The agentls authors
;; Maintainer: The agentls authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, convenience, processes
;; URL: https://github.com/agentls/agentls

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; agentls is an AI coding agent that editors run as a language
;; server (`agentls serve').  This package talks to it over its own
;; JSON-RPC connection (jsonrpc.el), next to whatever eglot or
;; lsp-mode runs for the buffer, so gopls, pyright and friends keep
;; serving it.  Nothing here blocks Emacs: every request is
;; asynchronous, and questions wait in their own buffers.
;;
;; - `M-x agentls' asks the agent (the active region is sent as
;;   context); the answer streams into a chat buffer with the tool
;;   calls, their status and clickable locations, and the plan.
;; - Proposed edits are shown as a diff (`agentls-diff-mode'): accept
;;   (a), accept always (A) and save that (S), reject the hunk at point
;;   (t) and accept the others (s), edit the proposal (e) and accept
;;   your version, ediff (E), reject (r), reject always (R), every
;;   choice (c).  An accepted edit is one undo step in its buffer and is
;;   saved (`agentls-save-after-edit').
;; - Every question offers the server's choices, with its labels; an
;;   "always" lasts for the session.
;; - Shell commands are asked with `read-multiple-choice'; their output
;;   streams into a `compilation-mode' buffer, progress shows in the
;;   mode line, and `agentls-cancel' stops them.
;; - The places a turn touches are Flymake notes until the turn ends.
;; - `agentls-turn-diff' shows what a prompt changed, its edits and its
;;   shell commands' changes, each file headed by the calls that changed
;;   it; `agentls-undo-turn' takes it all back (text files in one undo
;;   step), `agentls-redo-turn' brings it back.
;;
;; Minimal setup:
;;
;;   (use-package agentls
;;     :load-path "~/src/agentls/editors/emacs"
;;     :bind ("C-c a" . agentls))

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)
(require 'url-util)
(require 'diff-mode)
(require 'compile)
(require 'ansi-color)
(require 'flymake)
(require 'button)
(require 'transient)

(declare-function project-root "project" (project))
(declare-function ediff-buffers "ediff" (buffer-a buffer-b &optional startup-hooks job-name))

;;;; Customization

(defgroup agentls nil
  "The agentls coding agent, over its own JSON-RPC connection."
  :group 'tools
  :prefix "agentls-"
  :link '(url-link :tag "Home page" "https://github.com/agentls/agentls"))

(defcustom agentls-server-program '("agentls" "serve")
  "The command that starts the agentls server, as a list of strings."
  :type '(repeat string))

(defcustom agentls-server-environment nil
  "Extra environment for the server, as \"NAME=VALUE\" strings.
For example (\"GEMINI_API_KEY=...\")."
  :type '(repeat string))

(defcustom agentls-initialization-options nil
  "Settings sent as `initializationOptions' (a plist), or nil.
They take the keys of agentls's settings file, for example
\(:approvalMode \"auto_edit\")."
  :type '(choice (const :tag "None" nil) (plist :tag "Settings")))

(defcustom agentls-root-function #'agentls-default-root
  "Function of no arguments returning the workspace root of the current buffer.
It returns nil where there is none; `agentls' then asks for the
workspace (the directory whose files the agent may read and edit)."
  :type 'function)

(defcustom agentls-save-after-edit t
  "Non-nil means save the buffers an accepted agent edit touched.
The agent's next shell command then sees its own edits on disk."
  :type 'boolean)

(defcustom agentls-select-diff-window t
  "Non-nil means select the window of a proposed edit's diff."
  :type 'boolean)

(defcustom agentls-incremental-sync-size 65536
  "Buffers larger than this (in characters) send the server their changes.
Smaller ones send their whole text after a change, which is simplest
and always right; for large buffers that costs a pause per change."
  :type 'integer)

(defcustom agentls-question-delay 0.5
  "Seconds without typing before a question of the agent is shown.
A diff or a minibuffer question that appeared while you type would
take your next key as its answer."
  :type 'number)

(defcustom agentls-display-shell-output t
  "Non-nil means show the shell output buffer when a command starts."
  :type 'boolean)

(defcustom agentls-display-chat t
  "Non-nil means show the chat buffer when a prompt is sent."
  :type 'boolean)

(defcustom agentls-flymake t
  "Non-nil means show the places a turn touches as Flymake notes.
This turns `flymake-mode' on in the touched buffers."
  :type 'boolean)

(defcustom agentls-report-diagnostics t
  "Non-nil means the model learns the editor's diagnostics of what it changed.
After an edit of the agent, agentls.el reports the Flymake diagnostics
of the touched buffers (from every backend: eglot's language servers,
linters) once they have settled; the model is told which errors and
warnings the edit introduced and how many it resolved."
  :type 'boolean)

(defcustom agentls-diagnostics-wait 2.0
  "Seconds a call that changed files waits at most for their diagnostics."
  :type 'number)

(defcustom agentls-events-buffer-size 0
  "Size of the JSON-RPC events buffer in characters.
0 keeps no log (the fastest); nil keeps all of it."
  :type '(choice (const :tag "Unlimited" nil) integer))

(defcustom agentls-shutdown-timeout 3
  "Seconds to wait for the server to shut down before killing it."
  :type 'number)

(defface agentls-heading '((t :inherit bold))
  "Face of the headings in the chat buffer.")

(defface agentls-thought '((t :inherit shadow :slant italic))
  "Face of the model's thoughts in the chat buffer.")

(defface agentls-tool-call '((t :inherit font-lock-function-name-face))
  "Face of a tool call's line in the chat buffer.")

(defface agentls-status '((t :inherit shadow))
  "Face of a tool call's status in the chat buffer.")

(defface agentls-error '((t :inherit error))
  "Face of errors in the chat buffer.")

(defface agentls-command '((t :inherit font-lock-keyword-face))
  "Face of a command line in the shell output buffer.")

;;;; Connections

(defvar agentls--connections (make-hash-table :test #'equal)
  "The live connections, by workspace root.")

(defvar agentls--deferred-confirmations nil
  "Confirmations whose request id is known, waiting to be shown.")

(defvar agentls--modal-queue nil
  "Confirmations waiting for a minibuffer question, oldest first.")

(defvar agentls--modal-busy nil
  "Non-nil while a minibuffer confirmation is being asked.")

(cl-defstruct (agentls--confirmation (:constructor agentls--make-confirmation))
  conn details request-id done diff-buffer proposal-buffer original-buffer)

(defvar-local agentls--conn nil
  "The connection that has this buffer open.")

(defvar-local agentls--chat-conn nil "The connection of this chat buffer.")
(defvar-local agentls--session nil "The session of this chat buffer.")
(defvar-local agentls--busy nil
  "Non-nil while a prompt of this chat runs: from sending it to its turn_end.")
(defvar-local agentls--turn nil
  "The running prompt of this chat: a token its response is matched against.
The session is free once its turn_end arrives, before the prompt's
response, so the response of a prompt that is no longer the running one
changes nothing.")

(defclass agentls-connection (jsonrpc-process-connection)
  ((root :initarg :root :accessor agentls--root
         :documentation "The workspace root (a directory name).")
   (chat :initform nil :accessor agentls--chat
         :documentation "The chat buffer.")
   (confirmations :initform (make-hash-table :test #'equal)
                  :accessor agentls--confirmations
                  :documentation "Pending confirmations by request id.")
   (progress :initform (make-hash-table :test #'equal)
             :accessor agentls--progress
             :documentation "Running progress by token: (TITLE . MESSAGE).")
   (shell-calls :initform (make-hash-table :test #'equal)
                :accessor agentls--shell-calls
                :documentation "Shell tool calls seen, by toolCallId.")
   (touched :initform (make-hash-table :test #'equal)
            :accessor agentls--touched
            :documentation "Places of this turn by file: list of (LINE . TEXT).")
   (shell-diags :initform (make-hash-table :test #'equal)
                :accessor agentls--shell-diags
                :documentation "The server's agentls/shell diagnostics by file.")
   (mode :initform nil :accessor agentls--approval-mode
         :documentation "The approval mode set from Emacs, if any.")
   (ready :initform nil :accessor agentls--ready
          :documentation "Non-nil once `initialized' was sent.")
   (server-info :initform nil :accessor agentls--server-info
                :documentation "The server's serverInfo.")
   (start-error :initform nil :accessor agentls--start-error
                :documentation "Why `initialize' failed, if it did.")
   (tool-names :initform nil :accessor agentls--tool-names
               :documentation "The names of the server's tools, for completion.")
   (sandbox :initform nil :accessor agentls--sandbox
            :documentation "How the server contains shell commands (a plist).
The `sandbox' of agentls.status, asked when the server starts and by
`agentls-sandbox'."))
  :documentation "A JSON-RPC connection to an agentls server.")

(defun agentls-default-root ()
  "The current project's root, or nil outside a project."
  (and (fboundp 'project-current)
       (let ((proj (ignore-errors (project-current))))
         (and proj (project-root proj)))))

(defun agentls--project-root ()
  "The root `agentls-root-function' gives here, as a directory name, or nil."
  (let ((root (funcall agentls-root-function)))
    (and root (file-name-as-directory (expand-file-name root)))))

(defun agentls--current-root ()
  "The workspace root for the current buffer: its project, else its directory."
  (or (agentls--project-root)
      (file-name-as-directory (expand-file-name default-directory))))

(defmacro agentls--safely (what &rest body)
  "Run BODY, turning an error into a message that names WHAT.
Handlers run inside jsonrpc's process filter: an error escaping from
there would leave the server's next messages unread."
  (declare (indent 1) (debug t))
  `(condition-case-unless-debug err
       (progn ,@body)
     (error (message "agentls: %s: %s" ,what (error-message-string err))
            nil)))

(defun agentls--live-p (conn)
  "Non-nil if CONN is a live connection."
  (and conn (jsonrpc-running-p conn)))

(defun agentls--connection (&optional no-start)
  "The connection for the current buffer's workspace.
Start one unless NO-START.  Return nil when there is none."
  (let* ((root (agentls--project-root))
         (here (or root (file-name-as-directory (expand-file-name default-directory))))
         (conn (and root (gethash root agentls--connections))))
    (cond ((agentls--live-p conn) conn)
          ;; A buffer in a subdirectory of a running workspace.
          ((cl-loop for c being the hash-values of agentls--connections
                    when (and (agentls--live-p c)
                              (string-prefix-p (agentls--root c) here))
                    return c))
          (no-start nil)
          (root (agentls--start root))
          (t
           ;; Outside a project, the workspace (every file the agent may touch)
           ;; is the user's choice, not whatever `default-directory' is.
           (agentls--start
            (file-name-as-directory
             (expand-file-name
              (read-directory-name "agentls workspace (no project here): " here nil t))))))))

(defun agentls--any-connection ()
  "The current buffer's connection, else any live one."
  (or (agentls--connection t)
      (cl-loop for c being the hash-values of agentls--connections
               when (agentls--live-p c) return c)))

(defun agentls--path-to-uri (path)
  "The file URI of PATH."
  (concat "file://"
          (url-hexify-string (expand-file-name path) url-path-allowed-chars)))

(defun agentls--json (value)
  "Return VALUE (plists, vectors, :json-false, as jsonrpc gives them) as JSON text."
  (condition-case nil
      (json-serialize value :null-object nil :false-object :json-false)
    (error (prin1-to-string value))))

(defun agentls--uri-to-path (uri)
  "The local file name of URI."
  (if (string-prefix-p "file://" uri)
      (decode-coding-string (url-unhex-string (substring uri 7)) 'utf-8)
    uri))

(defun agentls--capabilities ()
  "The client capabilities agentls.el declares."
  (list :workspace (list :applyEdit t
                         :workspaceEdit (list :documentChanges t)
                         :workspaceFolders t)
        :textDocument (list :synchronization (list :didSave t :dynamicRegistration :json-false)
                            :publishDiagnostics (list :relatedInformation :json-false))
        :window (list :workDoneProgress t)
        :general (list :positionEncodings ["utf-32"])
        :experimental (list :agentls (append (list :confirm t :updates t :askUser t)
                                             (when agentls-report-diagnostics
                                               (list :diagnostics
                                                     (list :waitMs (round (* 1000 agentls-diagnostics-wait)))))))))

(defun agentls--start (root)
  "Start agentls for ROOT and return the connection."
  (let* ((program (car agentls-server-program))
         (found (executable-find (if (file-name-absolute-p program)
                                     (expand-file-name program) ; "~/go/bin/agentls"
                                   program))))
    (unless found
      (user-error "Cannot find the agentls program %S (see `agentls-server-program')"
                  program)))
  (let* ((name (format "agentls %s" (abbreviate-file-name root)))
         (default-directory root)
         (process-environment (append agentls-server-environment process-environment))
         (program (car agentls-server-program))
         (command (cons (executable-find (if (file-name-absolute-p program)
                                             (expand-file-name program)
                                           program))
                        (cdr agentls-server-program)))
         (conn
          (apply
           #'make-instance
           'agentls-connection
           :name name
           :root root
           :notification-dispatcher #'agentls--handle-notification
           :request-dispatcher #'agentls--handle-request
           :on-shutdown #'agentls--on-shutdown
           :process
           (lambda ()
             (make-process
              :name name
              :command command
              :connection-type 'pipe
              :coding 'utf-8-emacs-unix
              :noquery t
              :stderr (get-buffer-create (format "*%s stderr*" name))))
           ;; jsonrpc 1.0.2x replaced this initarg and warns about the old one.
           ;; Without a :format it logs each message as pretty-printed Lisp,
           ;; slow on large ones (Emacs 30's `pp'); `full' logs the JSON text.
           (if (slot-exists-p 'jsonrpc-connection '-events-buffer-config)
               (list :events-buffer-config (list :size agentls-events-buffer-size
                                                 :format 'full))
             (list :events-buffer-scrollback-size agentls-events-buffer-size)))))
    (add-function :around (process-filter (jsonrpc--process conn))
                  #'agentls--filter-guard)
    (puthash root conn agentls--connections)
    (agentls--async conn :initialize
                    (list :processId (emacs-pid)
                          :clientInfo (list :name "agentls.el" :version "0.1.0")
                          :rootUri (agentls--path-to-uri root)
                          :rootPath root
                          :workspaceFolders
                          (vector (list :uri (agentls--path-to-uri root)
                                        :name (file-name-nondirectory
                                               (directory-file-name root))))
                          :capabilities (agentls--capabilities)
                          :initializationOptions
                          (or agentls-initialization-options (make-hash-table)))
                    (lambda (result)
                      (setf (agentls--server-info conn) (plist-get result :serverInfo))
                      (jsonrpc-notify conn :initialized (make-hash-table))
                      (setf (agentls--ready conn) t)
                      (agentls--sync-all conn)
                      (agentls--async conn :agentls/tools (make-hash-table)
                                      (lambda (tools)
                                        (setf (agentls--tool-names conn)
                                              (sort (mapcar (lambda (tool) (plist-get tool :name))
                                                            (append tools nil))
                                                    #'string<)))
                                      #'ignore)
                      (agentls--sandbox-refresh conn))
                    (lambda (err)
                      ;; Nothing can go on: stop the server, and say why.
                      (setf (agentls--start-error conn)
                            (format "could not start: %s" (plist-get err :message)))
                      (let ((proc (jsonrpc--process conn)))
                        (when (process-live-p proc)
                          (run-at-time 0 nil #'delete-process proc)))))
    (agentls--mode-line-install)
    (add-hook 'find-file-hook #'agentls--maybe-open)
    (add-hook 'kill-buffer-hook #'agentls--maybe-close)
    (add-hook 'after-save-hook #'agentls--maybe-saved)
    conn))

(defun agentls--on-shutdown (conn)
  "Forget CONN, whose server has exited."
  (agentls--safely "shutdown"
    (when (eq (gethash (agentls--root conn) agentls--connections) conn)
      (remhash (agentls--root conn) agentls--connections))
    (maphash (lambda (_id entry) (agentls--close-confirmation entry))
             (agentls--confirmations conn))
    (clrhash (agentls--confirmations conn))
    (clrhash (agentls--progress conn))
    (agentls--clear-touched conn)
    (dolist (buf (buffer-list))
      (with-current-buffer buf
        (when (eq agentls--conn conn)
          (setq agentls--conn nil))))
    (let* ((proc (jsonrpc--process conn))
           (status (process-exit-status proc))
           (why (or (agentls--start-error conn)
                    (and (not (zerop status))
                         (format "agentls exited with status %d%s" status
                                 (let ((line (agentls--last-stderr-line conn)))
                                   (if line (concat ": " line) "")))))))
      (when why (message "agentls: %s" why))
      (when (buffer-live-p (agentls--chat conn))
        (with-current-buffer (agentls--chat conn)
          (setq agentls--busy nil))
        (agentls--chat-newline conn)
        (agentls--chat-insert conn (format "\n_agentls exited%s._\n"
                                           (if why (concat ": " why) ""))
                              (and why 'agentls-error))))
    (force-mode-line-update t)))

(defun agentls--last-stderr-line (conn)
  "The last line CONN's server wrote on stderr, or nil."
  (let ((buf (ignore-errors (jsonrpc-stderr-buffer conn))))
    (when (buffer-live-p buf)
      (with-current-buffer buf
        (let ((text (string-trim (buffer-substring-no-properties
                                  (max (point-min) (- (point-max) 2000)) (point-max)))))
          (unless (string-empty-p text)
            (car (last (split-string text "\n" t)))))))))

(defun agentls-shutdown (&optional conn)
  "Shut the agentls server of this workspace (or CONN) down."
  (interactive)
  (let ((conn (or conn (agentls--connection t))))
    (unless conn (user-error "No agentls server runs for this workspace"))
    (let ((proc (jsonrpc--process conn))
          done)
      (agentls--async conn :shutdown nil
                      (lambda (_) (setq done t)
                        (jsonrpc-notify conn :exit nil))
                      (lambda (_) (setq done t)))
      (with-timeout (agentls-shutdown-timeout nil)
        (while (process-live-p proc)
          (accept-process-output proc 0.05)))
      (ignore done)
      (when (process-live-p proc)
        (delete-process proc)))))

(defun agentls-restart ()
  "Restart the agentls server of this workspace."
  (interactive)
  (let ((conn (agentls--connection t)))
    (when conn (agentls-shutdown conn)))
  (agentls--connection)
  (message "agentls: restarted"))

;;;; The jsonrpc filter guard

(defun agentls--complete-message-pending-p (proc)
  "Non-nil if a whole message that jsonrpc did not read is in PROC's buffer."
  (let ((buf (process-buffer proc))
        (conn (process-get proc 'jsonrpc-connection)))
    (and (buffer-live-p buf) conn
         (fboundp 'jsonrpc--expected-bytes)
         (ignore-errors
           (with-current-buffer buf
             (save-excursion
               (let ((expected (jsonrpc--expected-bytes conn)))
                 (unless expected
                   (when (re-search-forward
                          "Content-Length: *\\([0-9]+\\)\r\n\\(?:.*: .*\r\n\\)*\r\n"
                          nil t)
                     (setq expected (string-to-number (match-string 1)))))
                 (and expected
                      (>= (- (position-bytes (process-mark proc))
                             (position-bytes (point)))
                          expected)))))))))

(defun agentls--filter-guard (filter proc string)
  "Run jsonrpc's process FILTER on PROC and STRING; read what it left.
jsonrpc 1.0.14 (Emacs 28) stops reading a chunk after any non-local
exit from a handler, leaving the server's next messages unread until
more output arrives; the server meanwhile waits for an answer to one
of them.  If whole messages are left, they are read from a timer."
  (unwind-protect
      (funcall filter proc string)
    (when (and (process-live-p proc)
               (agentls--complete-message-pending-p proc))
      (run-at-time 0 nil
                   (lambda ()
                     (when (process-live-p proc)
                       (funcall (process-filter proc) proc "")))))))

;;;; Requests

(defvar agentls--request-counter 0
  "Tells the deferred requests apart (see `agentls--async').")

(cl-defmethod jsonrpc-connection-ready-p ((conn agentls-connection) _what)
  "Non-nil once CONN's server has answered `initialize'."
  (agentls--ready conn))

(defun agentls--async (conn method params &optional on-result on-error)
  "Send request METHOD with PARAMS on CONN, without waiting.
Call ON-RESULT with the result or ON-ERROR with the error object.
Pending buffer changes are sent first.  Until the server has answered
`initialize', the request waits."
  (agentls--flush-all conn)
  (jsonrpc-async-request
   conn method params
   :timeout nil
   ;; A token of its own: jsonrpc replaces a deferred request by a later
   ;; one with the same token from the same buffer.
   :deferred (and (not (eq method :initialize))
                  (not (agentls--ready conn))
                  (format "agentls-%d" (cl-incf agentls--request-counter)))
   :success-fn (lambda (result)
                 (when on-result
                   (agentls--safely (format "%s" method)
                     (funcall on-result result))))
   :error-fn (lambda (err)
               (agentls--safely (format "%s" method)
                 (if on-error
                     (funcall on-error err)
                   (message "agentls: %s failed: %s" method
                            (plist-get err :message)))))))

(defun agentls--command (conn command arg &optional on-result)
  "Run COMMAND with one argument ARG through workspace/executeCommand on CONN.
Call ON-RESULT with its result."
  (agentls--async conn :workspace/executeCommand
                  (list :command command :arguments (vector arg))
                  on-result))

(cl-defmethod jsonrpc-connection-send ((conn agentls-connection) &rest args
                                       &key id result &allow-other-keys)
  "Send ARGS on CONN, holding back the answers that wait for the user.
A request handler answers with (agentls--deferred . ENTRY) when the
user decides later; the request's ID is then kept in ENTRY."
  (if (eq (car-safe result) 'agentls--deferred)
      (let ((entry (cdr result)))
        (setf (agentls--confirmation-request-id entry) id)
        (puthash id entry (agentls--confirmations conn))
        (push entry agentls--deferred-confirmations)
        (run-at-time 0 nil #'agentls--show-deferred))
    (cl-call-next-method)))

(defun agentls--reply (conn id result)
  "Answer CONN's request ID with RESULT."
  (when (agentls--live-p conn)
    (jsonrpc-connection-send conn :id id :result result)))

;;;; Dispatch

(defun agentls--handle-request (conn method params)
  "Answer CONN's request METHOD with PARAMS."
  (pcase method
    ('agentls/confirm (agentls--confirm-request conn params))
    ('workspace/applyEdit
     (or (agentls--safely "applyEdit" (agentls--apply-workspace-edit conn params))
         (list :applied :json-false :failureReason "agentls.el failed to apply the edit")))
    ('window/workDoneProgress/create nil)
    ('client/registerCapability nil)
    ('client/unregisterCapability nil)
    ('workspace/configuration
     (apply #'vector (make-list (length (plist-get params :items)) nil)))
    ('window/showMessageRequest
     ;; Only asked of clients without agentls/confirm; answer none.
     nil)
    (_ (jsonrpc-error :code -32601 :message (format "agentls.el does not handle %s" method)))))

(defun agentls--handle-notification (conn method params)
  "Handle CONN's notification METHOD with PARAMS."
  (agentls--safely (format "%s" method)
    (pcase method
      ('agentls/update (agentls--update conn params))
      ('agentls/collectDiagnostics (agentls--collect-diagnostics conn params))
      ('$/progress (agentls--progress-notification conn params))
      ('$/cancelRequest (agentls--server-cancelled conn (plist-get params :id)))
      ('textDocument/publishDiagnostics (agentls--publish-diagnostics conn params))
      ('window/showMessage
       (let ((text (plist-get params :message)))
         (unless (string-match-p "the answer is complete" text)
           (message "agentls: %s" text))))
      ('window/logMessage nil)
      (_ nil))))

;;;; Document sync

(defvar-local agentls--version 0
  "The version of this buffer last sent to the server.")
(defvar-local agentls--dirty nil
  "Non-nil when this buffer changed since its text was last sent.")
(defvar-local agentls--changes nil
  "The changes not sent yet, newest first, or `full' to send the whole text.")
(defvar-local agentls--before nil
  "(BEG END START-POSITION END-POSITION) of the change about to happen.")
(defvar-local agentls--agent-edited nil
  "Non-nil when the agent edited this buffer since it was last saved.")

(defvar agentls--flush-timer nil
  "Idle timer that sends pending changes.")

(defun agentls--conn-for-file (file)
  "Return the live connection of the workspace around FILE, or nil."
  (let ((file (expand-file-name file)))
    (cl-loop for c being the hash-values of agentls--connections
             when (and (agentls--live-p c) (agentls--ready c)
                       (string-prefix-p (agentls--root c) file))
             return c)))

(defun agentls--buffer-uri (&optional buffer)
  "The URI of BUFFER's file."
  (agentls--path-to-uri (buffer-file-name (buffer-base-buffer buffer))))

(defun agentls--buffer-text ()
  "The current buffer's whole text."
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

(defun agentls--open (conn)
  "Send didOpen of the current buffer to CONN."
  (setq agentls--conn conn
        agentls--version 1
        agentls--dirty nil
        agentls--changes nil)
  (add-hook 'before-change-functions #'agentls--before-change nil t)
  (add-hook 'after-change-functions #'agentls--after-change nil t)
  (jsonrpc-notify conn :textDocument/didOpen
                  (list :textDocument
                        (list :uri (agentls--buffer-uri)
                              :languageId (string-remove-suffix "-mode" (symbol-name major-mode))
                              :version agentls--version
                              :text (agentls--buffer-text)))))

(defun agentls--maybe-open ()
  "Open the current buffer on the connection of its workspace."
  (agentls--safely "didOpen"
    (when (and buffer-file-name (not agentls--conn) (not (buffer-base-buffer))
               (not (file-remote-p buffer-file-name)))
      (let ((conn (agentls--conn-for-file buffer-file-name)))
        (when conn
          (agentls--open conn)
          ;; Diagnostics made while the file was not open show now.
          (agentls--refresh-flymake buffer-file-name))))))

(defun agentls--sync-all (conn)
  "Open every file buffer under CONN's root."
  (dolist (buf (buffer-list))
    (with-current-buffer buf
      (when (and buffer-file-name (not (buffer-base-buffer))
                 (string-prefix-p (agentls--root conn) (expand-file-name buffer-file-name))
                 (not (agentls--live-p agentls--conn)))
        (agentls--open conn)))))

(defun agentls--before-change (beg end)
  "Remember the server's positions of BEG and END, before a change there."
  (when agentls--conn
    (setq agentls--before
          (and (not (eq agentls--changes 'full))
               (> (buffer-size) agentls-incremental-sync-size)
               (list beg end (agentls--lsp-position beg) (agentls--lsp-position end))))))

(defun agentls--after-change (beg end old-len)
  "Note the change of BEG..END (OLD-LEN characters before); it is sent soon.
A large buffer keeps the change itself; anything unexpected (a change
not announced as it happened) falls back to sending the whole text."
  (when agentls--conn
    (setq agentls--dirty t)
    (let ((before agentls--before))
      (setq agentls--before nil)
      (unless (eq agentls--changes 'full)
        (if (and before
                 (= (nth 0 before) beg)
                 (= (- (nth 1 before) (nth 0 before)) old-len)
                 (< (length agentls--changes) 1000))
            (push (list :range (list :start (nth 2 before) :end (nth 3 before))
                        :text (buffer-substring-no-properties beg end))
                  agentls--changes)
          (setq agentls--changes 'full))))
    (unless agentls--flush-timer
      (setq agentls--flush-timer
            (run-with-idle-timer 0.3 nil #'agentls--flush-everything)))))

(defun agentls--flush ()
  "Send the current buffer's text to its server if it changed."
  (when (and agentls--dirty (agentls--live-p agentls--conn))
    (let ((changes (if (consp agentls--changes)
                       (vconcat (reverse agentls--changes))
                     (vector (list :text (agentls--buffer-text))))))
      (setq agentls--dirty nil
            agentls--changes nil)
      (cl-incf agentls--version)
      (jsonrpc-notify agentls--conn :textDocument/didChange
                      (list :textDocument (list :uri (agentls--buffer-uri)
                                                :version agentls--version)
                            :contentChanges changes)))))

(defun agentls--flush-everything ()
  "Send the text of every buffer that changed since it was sent."
  (setq agentls--flush-timer nil)
  (dolist (buf (buffer-list))
    (with-current-buffer buf
      (when agentls--dirty
        (agentls--safely "didChange" (agentls--flush))))))

(defun agentls--flush-all (conn)
  "Send the text of CONN's buffers that changed since it was sent."
  (dolist (buf (buffer-list))
    (with-current-buffer buf
      (when (and agentls--dirty (eq agentls--conn conn))
        (agentls--flush)))))

(defun agentls--maybe-close ()
  "Send didClose for the buffer being killed."
  (agentls--safely "didClose"
    (when (agentls--live-p agentls--conn)
      (jsonrpc-notify agentls--conn :textDocument/didClose
                      (list :textDocument (list :uri (agentls--buffer-uri))))
      (setq agentls--conn nil))))

(defun agentls--maybe-saved ()
  "Send didSave for the buffer just saved."
  (setq agentls--agent-edited nil)
  (agentls--safely "didSave"
    (when (agentls--live-p agentls--conn)
      (agentls--flush)
      (jsonrpc-notify agentls--conn :textDocument/didSave
                      (list :textDocument (list :uri (agentls--buffer-uri))
                            :text (agentls--buffer-text))))))

;;;; Positions and edits

(defun agentls--point (pos)
  "The buffer position of the LSP position POS (utf-32 characters)."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (if (> (forward-line (plist-get pos :line)) 0)
          (point-max)
        (min (line-end-position) (+ (point) (plist-get pos :character)))))))

(defun agentls--lsp-position (point)
  "The LSP position of POINT."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char point)
      (list :line (1- (line-number-at-pos point t))
            :character (- point (line-beginning-position))))))

(defun agentls--apply-text-edits (edits)
  "Apply the LSP text EDITS (a vector) to the current buffer as one undo step."
  (let* ((index 0)
         (ranges (mapcar (lambda (e)
                           (let ((r (plist-get e :range)))
                             (list (agentls--point (plist-get r :start))
                                   (agentls--point (plist-get r :end))
                                   (plist-get e :newText)
                                   (cl-incf index))))
                         edits))
         ;; Last first, so earlier positions stay valid; of edits at one
         ;; place, the later one first, so that the text ends up in order.
         (sorted (sort ranges (lambda (a b) (or (> (car a) (car b))
                                                (and (= (car a) (car b))
                                                     (> (nth 3 a) (nth 3 b)))))))
         ;; A boundary before the group, which amalgamates every change after
         ;; its start: a change made just before (by a command that is still
         ;; running, or a revert) stays a step of its own.
         (group (progn (undo-boundary) (prepare-change-group))))
    (save-excursion
      (save-restriction
        (widen)
        (unwind-protect
            (progn
              (activate-change-group group)
              (dolist (r sorted)
                (goto-char (nth 0 r))
                (delete-region (nth 0 r) (nth 1 r))
                (insert (nth 2 r)))
              (undo-amalgamate-change-group group)
              (accept-change-group group)
              (setq group nil))
          (when group (cancel-change-group group)))))
    (undo-boundary)))

(defun agentls--document-edits (edit)
  "The edits of the WorkspaceEdit EDIT as a list of (FILE VERSION EDITS)."
  (let (out)
    (seq-doseq (change (plist-get edit :documentChanges))
      (unless (plist-get change :kind)
        (let ((doc (plist-get change :textDocument)))
          (push (list (agentls--uri-to-path (plist-get doc :uri))
                      (plist-get doc :version)
                      (plist-get change :edits))
                out))))
    (let ((changes (plist-get edit :changes)))
      (while changes
        (push (list (agentls--uri-to-path (substring (symbol-name (car changes)) 1))
                    nil (cadr changes))
              out)
        (setq changes (cddr changes))))
    (nreverse out)))

(defun agentls--stale-reason (file version)
  "Why the edit of FILE for VERSION cannot be applied, or nil."
  (let ((buf (find-buffer-visiting file)))
    (cond ((null version) nil)
          ((null buf) (format "%s is not open in Emacs" (file-relative-name file)))
          ((with-current-buffer buf
             (or agentls--dirty (not (eql agentls--version version))))
           (format "%s changed in Emacs since the edit was computed (edit for version %s, buffer at %s)"
                   (file-name-nondirectory file) version
                   (buffer-local-value 'agentls--version buf))))))

(defun agentls--unsaved-agent-edits (conn)
  "The names of CONN's buffers with agent edits that are not saved."
  (cl-loop for b in (buffer-list)
           when (and (eq (buffer-local-value 'agentls--conn b) conn)
                     (buffer-local-value 'agentls--agent-edited b)
                     (buffer-modified-p b))
           collect (buffer-name b)))

(defvar agentls-after-edit-hook nil
  "Hook run in a buffer after an agent edit was applied to it.")

(defun agentls--apply-workspace-edit (conn params)
  "Apply the workspace/applyEdit PARAMS from CONN; return the result."
  (let* ((docs (agentls--document-edits (plist-get params :edit)))
         (stale (cl-some (lambda (d) (agentls--stale-reason (nth 0 d) (nth 1 d))) docs)))
    (if stale
        (progn (message "agentls: edit refused: %s" stale)
               (list :applied :json-false :failureReason stale))
      (dolist (d docs)
        (let ((buf (or (find-buffer-visiting (nth 0 d))
                       (find-file-noselect (nth 0 d)))))
          (with-current-buffer buf
            (unless (agentls--live-p agentls--conn) (agentls--open conn))
            (agentls--apply-text-edits (nth 2 d))
            (agentls--flush)
            (setq agentls--agent-edited t)
            (when agentls-save-after-edit
              ;; The edit stands even if saving fails; say so.
              (condition-case err
                  (let ((save-silently t) (inhibit-message t))
                    (save-buffer))
                (error (message "agentls: the edit of %s was applied but not saved: %s"
                                (buffer-name) (error-message-string err)))))
            (agentls--safely "agentls-after-edit-hook"
              (run-hooks 'agentls-after-edit-hook)))))
      (when-let* ((label (plist-get params :label)))
        (message "agentls: %s" label))
      (list :applied t))))

;;;; Confirmations

(defun agentls--confirm-request (conn params)
  "Take the agentls/confirm request PARAMS of CONN: answer it later."
  (cons 'agentls--deferred
        (agentls--make-confirmation :conn conn :details params)))

(defun agentls--user-idle-p ()
  "Non-nil when the user has not typed for `agentls-question-delay' seconds."
  (or noninteractive
      (let ((idle (current-idle-time)))
        (and idle (>= (float-time idle) agentls-question-delay)))))

(defvar agentls--show-timer nil
  "The timer that shows waiting questions once the user pauses.")

(defun agentls--show-deferred ()
  "Show the confirmations that arrived, once the user pauses typing.
A question that took the keyboard mid-word would take the next key
as its answer."
  (cond ((null agentls--deferred-confirmations))
        ((agentls--user-idle-p) (agentls--show-deferred-now))
        ((not (timerp agentls--show-timer))
         (message "agentls: a question waits for a pause in your typing")
         (setq agentls--show-timer
               (run-with-timer 0.2 0.2
                               (lambda ()
                                 (when (or (null agentls--deferred-confirmations)
                                           (agentls--user-idle-p))
                                   (cancel-timer agentls--show-timer)
                                   (setq agentls--show-timer nil)
                                   (agentls--show-deferred))))))))

(defun agentls--show-deferred-now ()
  "Show the confirmations that arrived."
  (let ((entries (reverse agentls--deferred-confirmations)))
    (setq agentls--deferred-confirmations nil)
    (dolist (entry entries)
      (unless (agentls--confirmation-done entry)
        (condition-case err
            (if (equal (plist-get (agentls--confirmation-details entry) :type) "edit")
                (agentls--show-edit entry)
              (setq agentls--modal-queue (append agentls--modal-queue (list entry)))
              (agentls--next-modal))
          (error
           (message "agentls: cannot show the question, refusing it: %s"
                    (error-message-string err))
           (agentls--answer entry "cancel")))))
    (force-mode-line-update t)))

(defun agentls--send-answer (entry result)
  "Answer the confirmation ENTRY with RESULT, a plist, once."
  (unless (agentls--confirmation-done entry)
    (setf (agentls--confirmation-done entry) t)
    (let ((conn (agentls--confirmation-conn entry))
          (id (agentls--confirmation-request-id entry)))
      (remhash id (agentls--confirmations conn))
      (agentls--flush-all conn)
      (agentls--reply conn id result))
    (agentls--close-confirmation entry)
    (force-mode-line-update t)))

(defun agentls--answer (entry outcome &optional content extra)
  "Answer the confirmation ENTRY with OUTCOME (and CONTENT).
For answers that are no offered choice: modify_with_editor with
CONTENT, the answers of ask_user, a refusal when the call moved on.
EXTRA is a plist of more fields of the answer, such as :answers."
  (agentls--send-answer entry (append (list :outcome outcome)
                                      (and content (list :content content))
                                      extra)))

(defun agentls--choose (entry choice &optional extra)
  "Answer the confirmation ENTRY with CHOICE, an item of `agentls--choices'.
Its id goes back as the answer's choice, so that the server applies
exactly the answer it offered; a choice without an id (from a server
that offered none) sends its outcome.  EXTRA is a plist of more
fields, such as :acceptedHunks with the choice \"once\"."
  (if (nth 2 choice)
      (agentls--send-answer entry (append (list :choice (nth 2 choice)) extra))
    (agentls--answer entry (nth 3 choice) nil extra)))

(defun agentls--offered (entry id)
  "The choice of ENTRY whose id is ID, or nil when it is not offered.
Without choices from the server, \"once\" and \"reject\" are
still there, as outcomes."
  (let ((choices (agentls--choices (agentls--confirmation-details entry))))
    (or (cl-find id choices :key (lambda (c) (nth 2 c)) :test #'equal)
        (and (member id '("once" "reject"))
             (cl-find (if (equal id "once") "proceed_once" "cancel")
                      (agentls--choices nil)
                      :key (lambda (c) (nth 3 c)) :test #'equal)))))

(defun agentls--choose-id (entry id &optional extra)
  "Answer ENTRY with its offered choice ID (and EXTRA), or say it is not offered."
  (let ((c (or (agentls--offered entry id)
               (user-error "This question does not offer \"%s\"" id))))
    (agentls--choose entry c extra)))

(defun agentls--refuse (entry)
  "Refuse the confirmation ENTRY: its \"reject\" choice, else cancel."
  (let ((c (agentls--offered entry "reject")))
    (if c (agentls--choose entry c) (agentls--answer entry "cancel"))))

(defun agentls--close-confirmation (entry)
  "Take the buffers of the confirmation ENTRY down."
  (setf (agentls--confirmation-done entry) t)
  (dolist (buf (list (agentls--confirmation-proposal-buffer entry)
                     (agentls--confirmation-original-buffer entry)
                     (agentls--confirmation-diff-buffer entry)))
    (when (buffer-live-p buf)
      (dolist (win (get-buffer-window-list buf nil t))
        (quit-restore-window win 'bury))
      (with-current-buffer buf (set-buffer-modified-p nil))
      (let ((kill-buffer-query-functions nil))
        (kill-buffer buf)))))

(defun agentls--server-cancelled (conn id)
  "The server no longer needs the answer to its request ID on CONN."
  (let ((entry (gethash id (agentls--confirmations conn))))
    (when entry
      (remhash id (agentls--confirmations conn))
      (agentls--close-confirmation entry)
      (setq agentls--modal-queue (delq entry agentls--modal-queue)))))

(defun agentls--pending-confirmations ()
  "The confirmations waiting for the user."
  (let (out)
    (maphash (lambda (_ c)
               (when (agentls--live-p c)
                 (maphash (lambda (_ e) (unless (agentls--confirmation-done e) (push e out)))
                          (agentls--confirmations c))))
             agentls--connections)
    out))

;;;;; Edits, in a diff buffer

(defvar-local agentls--entry nil
  "The confirmation this buffer shows.")

(defvar-local agentls--rejected-hunks nil
  "The indices of the hunks of this diff buffer's edit marked rejected.")

(defvar agentls-diff-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'agentls-diff-accept)
    (define-key map "A" #'agentls-diff-accept-always)
    (define-key map "S" #'agentls-diff-accept-always-save)
    (define-key map "t" #'agentls-diff-toggle-hunk)
    (define-key map "s" #'agentls-diff-submit-hunks)
    (define-key map "e" #'agentls-diff-edit)
    (define-key map "E" #'agentls-diff-ediff)
    (define-key map "r" #'agentls-diff-reject)
    (define-key map "q" #'agentls-diff-reject)
    (define-key map "R" #'agentls-diff-reject-always)
    (define-key map "c" #'agentls-diff-choose)
    (define-key map (kbd "C-c C-c") #'agentls-diff-accept)
    (define-key map (kbd "C-c C-k") #'agentls-diff-reject)
    map)
  "Keys of `agentls-diff-mode'.")

(define-derived-mode agentls-diff-mode diff-mode "agentls-diff"
  "A proposed edit of the agent, waiting for your answer.
The answers are the server's choices; the header line shows their
labels.
\\<agentls-diff-mode-map>\\[agentls-diff-accept] accepts it once,
\\[agentls-diff-accept-always] accepts it and every edit of this session,
\\[agentls-diff-accept-always-save] does that and saves the approval in
your settings,
\\[agentls-diff-toggle-hunk] marks the hunk at point rejected (or accepted
again) and \\[agentls-diff-submit-hunks] accepts only the hunks not marked,
\\[agentls-diff-edit] opens the proposal to edit (then
\\[agentls-diff-accept] accepts your version),
\\[agentls-diff-ediff] compares in ediff,
\\[agentls-diff-reject] rejects it,
\\[agentls-diff-reject-always] rejects it and every call of the tool for
this session, and \\[agentls-diff-choose] offers every choice.

\\{agentls-diff-mode-map}"
  (setq buffer-read-only t)
  (setq-local diff-vc-backend nil)
  (setq header-line-format
        (substitute-command-keys
         "agentls: \\<agentls-diff-mode-map>\\[agentls-diff-accept] accept  \
\\[agentls-diff-toggle-hunk] toggle hunk  \\[agentls-diff-submit-hunks] submit hunks  \
\\[agentls-diff-edit] edit  \\[agentls-diff-ediff] ediff  \\[agentls-diff-reject] reject  \
\\[agentls-diff-choose] choices")))

(defconst agentls--diff-choice-commands
  '(("once" . agentls-diff-accept)
    ("always" . agentls-diff-accept-always)
    ("always_save" . agentls-diff-accept-always-save)
    ("reject" . agentls-diff-reject)
    ("reject_always" . agentls-diff-reject-always))
  "The commands of `agentls-diff-mode' that answer with a choice, by its id.")

(defun agentls--diff-header (entry)
  "The header line of the diff buffer of the edit confirmation ENTRY.
Each offered choice with its key and the server's label, then the
keys to edit, choose hunks and compare."
  (concat
   "agentls: "
   (mapconcat
    (lambda (c)
      (let ((cmd (cdr (assoc (or (nth 2 c) (if (equal (nth 3 c) "cancel") "reject" "once"))
                             agentls--diff-choice-commands))))
        (format "%s %s"
                (if cmd
                    (substitute-command-keys
                     (format "\\<agentls-diff-mode-map>\\[%s]" cmd))
                  (substitute-command-keys "\\<agentls-diff-mode-map>\\[agentls-diff-choose]"))
                (nth 1 c))))
    (agentls--choices (agentls--confirmation-details entry))
    " · ")
   (substitute-command-keys
    " · \\<agentls-diff-mode-map>\\[agentls-diff-toggle-hunk] toggle hunk  \
\\[agentls-diff-submit-hunks] submit hunks  \\[agentls-diff-edit] edit  \
\\[agentls-diff-ediff] ediff  \\[agentls-diff-choose] choices")))

(defvar agentls-proposal-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'agentls-proposal-accept)
    (define-key map (kbd "C-c C-k") #'agentls-diff-reject)
    map)
  "Keys of `agentls-proposal-mode'.")

(define-minor-mode agentls-proposal-mode
  "The agent's proposed file text, editable before you accept it.
\\<agentls-proposal-mode-map>\\[agentls-proposal-accept] accepts this version; \
\\[agentls-diff-reject] rejects the edit."
  :lighter " agentls-proposal"
  :keymap agentls-proposal-mode-map
  (when agentls-proposal-mode
    (setq header-line-format
          (substitute-command-keys
           "agentls proposal: \\<agentls-proposal-mode-map>\\[agentls-proposal-accept] \
accept this version  \\[agentls-diff-reject] reject"))))

(defun agentls--display-name (entry)
  "A short name for the file of the edit confirmation ENTRY."
  (let* ((d (agentls--confirmation-details entry))
         (file (or (and (plist-get d :uri) (agentls--uri-to-path (plist-get d :uri)))
                   (plist-get d :path))))
    (if file
        (file-relative-name file (agentls--root (agentls--confirmation-conn entry)))
      "file")))

(defun agentls--show-edit (entry)
  "Show the edit confirmation ENTRY in a diff buffer."
  (let* ((d (agentls--confirmation-details entry))
         (conn (agentls--confirmation-conn entry))
         (default-directory (agentls--root conn))
         (name (agentls--display-name entry))
         (buf (generate-new-buffer (format "*agentls diff: %s*" name))))
    (setf (agentls--confirmation-diff-buffer entry) buf)
    (with-current-buffer buf
      (let ((inhibit-read-only t)
            (diff (or (plist-get d :diff) "")))
        (insert (format "# %s\n" (or (plist-get d :title) "Edit")))
        (unless (string-match-p "^--- " diff)
          (insert (format "--- a/%s\n+++ b/%s\n" name name)))
        (insert diff)
        (unless (bolp) (insert "\n")))
      (agentls-diff-mode)
      (setq default-directory (agentls--root conn))
      (setq agentls--entry entry)
      (setq header-line-format (agentls--diff-header entry))
      ;; Killing the diff without deciding is a refusal: no answer is never consent.
      (add-hook 'kill-buffer-hook
                (lambda ()
                  (unless (agentls--confirmation-done entry)
                    (agentls--refuse entry)))
                nil t)
      (goto-char (point-min))
      (ignore-errors (diff-hunk-next)))
    (if agentls-select-diff-window
        (pop-to-buffer buf)
      (display-buffer buf))
    (message "%s" (format (substitute-command-keys
                           "agentls: an edit of %s waits for you (\\<agentls-diff-mode-map>\\[agentls-diff-accept] accept, \\[agentls-diff-reject] reject)")
                          name))
    buf))

(defun agentls--diff-entry ()
  "The confirmation of the current buffer, or the newest pending one."
  (let ((e (or agentls--entry
               (car (cl-remove-if-not
                     (lambda (e) (equal (plist-get (agentls--confirmation-details e) :type) "edit"))
                     (agentls--pending-confirmations))))))
    (unless (and e (not (agentls--confirmation-done e)))
      (user-error "No agentls edit waits for an answer here"))
    e))

(defun agentls--proposal-text (entry)
  "The text of ENTRY's proposal buffer, or nil when it was not edited."
  (let ((buf (agentls--confirmation-proposal-buffer entry))
        (orig (or (plist-get (agentls--confirmation-details entry) :newContent) "")))
    (when (buffer-live-p buf)
      (let ((text (with-current-buffer buf (agentls--buffer-text))))
        (unless (equal text orig) text)))))

(defun agentls-diff-accept ()
  "Accept the proposed edit (your version, if you edited the proposal).
With hunks marked rejected, accept only the others."
  (interactive)
  (let* ((entry (agentls--diff-entry))
         (mine (agentls--proposal-text entry)))
    (cond (mine (agentls--answer entry "modify_with_editor" mine))
          ((and agentls--rejected-hunks (eq agentls--entry entry))
           (agentls-diff-submit-hunks))
          (t (agentls--choose-id entry "once")))))

(defun agentls--diff-choose-unmodified (id)
  "Answer the edit of this buffer with its offered choice ID.
An \"always\" answer applies the proposal as proposed, so not after
you edited it."
  (let ((entry (agentls--diff-entry)))
    (when (agentls--proposal-text entry)
      (user-error "You edited the proposal: accept your version with `agentls-diff-accept'"))
    (agentls--choose-id entry id)))

(defun agentls-diff-accept-always ()
  "Accept the proposed edit and every edit of this session (choice always)."
  (interactive)
  (agentls--diff-choose-unmodified "always"))

(defun agentls-diff-accept-always-save ()
  "Accept the proposed edit always, and save that (choice always_save).
The server writes the rule into your settings file; `agentls rules'
on the command line lists and removes saved rules."
  (interactive)
  (agentls--diff-choose-unmodified "always_save"))

(defun agentls-diff-reject-always ()
  "Reject the edit, and every call of its tool for this session (reject_always)."
  (interactive)
  (agentls--choose-id (agentls--diff-entry) "reject_always"))

(defun agentls-diff-choose ()
  "Answer the edit with one of the server's choices, read in the minibuffer."
  (interactive)
  (let* ((entry (agentls--diff-entry))
         (choice (or (agentls--read-choice entry) (user-error "Quit"))))
    (when (and (agentls--proposal-text entry) (not (member (nth 3 choice) '("cancel" "reject_always"))))
      (user-error "You edited the proposal: accept your version with `agentls-diff-accept'"))
    (agentls--choose entry choice)))

;;;;; Choosing hunks

(defun agentls--diff-hunks (entry)
  "The hunks of ENTRY's edit that may be chosen one by one, or nil.
The server sends them only for edits that can apply a part of the
proposal."
  (let ((hunks (plist-get (agentls--confirmation-details entry) :hunks)))
    (and (vectorp hunks) (> (length hunks) 0) hunks)))

(defun agentls--hunk-index-at-point ()
  "The index of the diff hunk at point, counted from 0, or nil before the first."
  (save-excursion
    (end-of-line)
    (let ((n -1))
      (while (re-search-backward "^@@ " nil t)
        (setq n (1+ n)))
      (and (>= n 0) n))))

(defun agentls--mark-hunks ()
  "Show on each hunk header of this diff buffer whether it is rejected."
  (remove-overlays (point-min) (point-max) 'agentls-hunk t)
  (save-excursion
    (goto-char (point-min))
    (let ((i 0))
      (while (re-search-forward "^@@ .*$" nil t)
        (when (memq i agentls--rejected-hunks)
          (let ((ov (make-overlay (match-beginning 0) (match-end 0))))
            (overlay-put ov 'agentls-hunk t)
            (overlay-put ov 'face 'shadow)
            (overlay-put ov 'after-string (propertize "  [rejected]" 'face 'error))))
        (setq i (1+ i))))))

(defun agentls-diff-toggle-hunk ()
  "Mark the hunk at point rejected, or accepted again.
Then \\<agentls-diff-mode-map>\\[agentls-diff-submit-hunks] accepts the hunks not marked."
  (interactive)
  (unless (derived-mode-p 'agentls-diff-mode)
    (user-error "Not in an agentls diff buffer"))
  (let* ((entry (agentls--diff-entry))
         (hunks (or (agentls--diff-hunks entry)
                    (user-error "This edit can only be accepted or rejected whole")))
         (i (agentls--hunk-index-at-point)))
    (unless (and i (< i (length hunks)))
      (user-error "Point is not on a hunk"))
    (setq agentls--rejected-hunks
          (if (memq i agentls--rejected-hunks)
              (delq i agentls--rejected-hunks)
            (cons i agentls--rejected-hunks)))
    (agentls--mark-hunks)
    (message "agentls: hunk %d of %d %s; %d of %d accepted" (1+ i) (length hunks)
             (if (memq i agentls--rejected-hunks) "rejected" "accepted")
             (- (length hunks) (length agentls--rejected-hunks)) (length hunks))))

(defun agentls-diff-submit-hunks ()
  "Accept only the hunks of the edit not marked rejected.
The server applies those to the file and tells the model which were
taken.  With every hunk rejected, this rejects the edit."
  (interactive)
  (unless (derived-mode-p 'agentls-diff-mode)
    (user-error "Not in an agentls diff buffer"))
  (let* ((entry (agentls--diff-entry))
         (hunks (or (agentls--diff-hunks entry)
                    (user-error "This edit can only be accepted or rejected whole"))))
    (when (agentls--proposal-text entry)
      (user-error "You edited the proposal: accept your version with `agentls-diff-accept'"))
    (agentls--choose-id entry "once"
                        (list :acceptedHunks
                              (vconcat (cl-loop for i below (length hunks)
                                                unless (memq i agentls--rejected-hunks)
                                                collect i))))))

(defun agentls-diff-reject ()
  "Reject the proposed edit."
  (interactive)
  (agentls--refuse (agentls--diff-entry)))

(defun agentls--proposal-buffer (entry)
  "ENTRY's buffer holding the editable proposal."
  (let ((buf (agentls--confirmation-proposal-buffer entry)))
    (unless (buffer-live-p buf)
      (let* ((d (agentls--confirmation-details entry))
             (name (file-name-nondirectory (agentls--display-name entry)))
             (file (and (plist-get d :uri) (agentls--uri-to-path (plist-get d :uri)))))
        (setq buf (generate-new-buffer (format "*agentls proposal: %s*" name)))
        (setf (agentls--confirmation-proposal-buffer entry) buf)
        (with-current-buffer buf
          (insert (or (plist-get d :newContent) ""))
          (let ((buffer-file-name file))
            (ignore-errors (set-auto-mode)))
          (setq agentls--entry entry)
          (agentls-proposal-mode 1)
          (set-buffer-modified-p nil)
          (goto-char (point-min)))))
    buf))

(defun agentls-diff-edit ()
  "Edit the agent's proposal before accepting it.
Return the proposal's buffer."
  (interactive)
  (let ((buf (agentls--proposal-buffer (agentls--diff-entry))))
    (pop-to-buffer buf)
    buf))

(defun agentls-proposal-accept ()
  "Accept the proposal as it is in this buffer."
  (interactive)
  (let ((entry (agentls--diff-entry)))
    (agentls--answer entry "modify_with_editor"
                     (with-current-buffer (agentls--proposal-buffer entry)
                       (agentls--buffer-text)))))

(defun agentls-diff-ediff ()
  "Compare the current text with the (editable) proposal in ediff.
After quitting ediff, accept or reject in the diff buffer."
  (interactive)
  (require 'ediff)
  (let* ((entry (agentls--diff-entry))
         (d (agentls--confirmation-details entry))
         (orig (or (agentls--confirmation-original-buffer entry)
                   (let ((b (generate-new-buffer
                             (format "*agentls current: %s*"
                                     (file-name-nondirectory (agentls--display-name entry))))))
                     (with-current-buffer b
                       (insert (or (plist-get d :originalContent) ""))
                       (setq buffer-read-only t))
                     (setf (agentls--confirmation-original-buffer entry) b)
                     b)))
         (diff-buf (agentls--confirmation-diff-buffer entry)))
    (ediff-buffers orig (agentls--proposal-buffer entry)
                   (list (lambda ()
                           (add-hook 'ediff-quit-hook
                                     (lambda ()
                                       (when (buffer-live-p diff-buf)
                                         (pop-to-buffer diff-buf)))
                                     t t))))))

;;;;; Other questions, in the minibuffer

(defconst agentls--choice-keys
  '(("once" . ?y) ("always" . ?a) ("always_server" . ?s) ("always_save" . ?S)
    ("reject" . ?n) ("reject_always" . ?N))
  "The keys of the server's choices, by choice id.
Choices with other ids (a question's own, whose ids are outcomes)
are numbered from 1.")

(defun agentls--choices (d)
  "The answers offered by the confirmation details D, in the order to show them.
Exactly the server's choices (D's :choices, made once by the server
for every front end), as a list of (KEY LABEL ID OUTCOME): KEY the
key that picks it, LABEL the server's label, ID what the answer
sends back (nil for a choice without one: the answer is then its
OUTCOME).  A server that offers none (it should not) gets \"Allow
once\" and \"Reject\", without ids."
  (let ((used nil) (n 0) out)
    (dolist (c (append (plist-get d :choices) nil))
      (let ((label (plist-get c :label))
            (id (and (stringp (plist-get c :id)) (not (string-empty-p (plist-get c :id)))
                     (plist-get c :id)))
            (outcome (plist-get c :outcome)))
        (when (and (stringp label) (or id (stringp outcome)))
          (let ((key (cdr (assoc id agentls--choice-keys))))
            (when (or (null key) (memq key used))
              (while (memq (setq key (+ ?1 n)) used) (setq n (1+ n))))
            (push key used)
            (push (list key label id outcome) out)))))
    (or (nreverse out)
        (list (list ?y "Allow once" nil "proceed_once")
              (list ?n "Reject" nil "cancel")))))

(defun agentls--question (d &optional conn)
  "The question to ask for the confirmation details D of CONN."
  (let ((title (or (plist-get d :title) "agentls")))
    (pcase (plist-get d :type)
      ("execute"
       (let ((unsaved (and conn (agentls--unsaved-agent-edits conn))))
         (format "agentls: %s\nRun `%s'%s?%s " title (plist-get d :command)
                 (if (plist-get d :directory)
                     (format " in %s" (abbreviate-file-name (plist-get d :directory)))
                   "")
                 (if unsaved
                     (format "\n(Not saved yet, so the command sees the old text: %s)"
                             (mapconcat #'identity unsaved ", "))
                   ""))))
      ("mcp" (format "agentls: %s\nCall %s of MCP server %s with %s? " title
                     (plist-get d :tool) (plist-get d :server)
                     (agentls--json (plist-get d :arguments))))
      ("info" (let ((p (plist-get d :prompt)))
                (format "agentls: %s%s " title
                        (if (and p (not (equal p title))) (concat "\n" p) ""))))
      (_ (format "agentls: %s " title)))))

(defun agentls--next-modal ()
  "Ask the oldest waiting minibuffer question, from a timer.
While the minibuffer is in use, wait for it to be free."
  (cond
   ((and agentls--modal-queue (not agentls--modal-busy) (active-minibuffer-window))
    (message "agentls: a question waits until the minibuffer is free")
    (run-with-timer 0.5 nil #'agentls--next-modal))
   ((not agentls--modal-busy)
    (let ((entry (pop agentls--modal-queue)))
      (while (and entry (agentls--confirmation-done entry))
        (setq entry (pop agentls--modal-queue)))
      (when entry
        (setq agentls--modal-busy t)
        (run-at-time 0 nil #'agentls--ask entry))))))

(defun agentls--ask-user (questions)
  "Ask QUESTIONS, the model's ask_user (or an MCP server's form), in turn.
A single choice and yes/no are read with `completing-read', free
text and several choices (labels separated by commas) with
`read-string'; an empty text leaves a question unanswered.  Return
a hash table of the answers by question index (as strings), or nil
when the user quits any question, which dismisses them all."
  (let ((answers (make-hash-table :test #'equal))
        (i 0))
    (condition-case nil
        (progn
          (dolist (q (append questions nil))
            (let* ((header (plist-get q :header))
                   (prompt (format "agentls: %s%s"
                                   (if (and (stringp header) (> (length header) 0))
                                       (concat header ": ")
                                     "")
                                   (plist-get q :question)))
                   (labels (cond ((equal (plist-get q :type) "yesno") (list "Yes" "No"))
                                 ((equal (plist-get q :type) "text") nil)
                                 (t (delq nil (mapcar (lambda (o) (plist-get o :label))
                                                      (append (plist-get q :options) nil))))))
                   (value
                    (if (and labels (not (eq (plist-get q :multiSelect) t)))
                        (completing-read (concat prompt " ") labels nil t)
                      (read-string
                       (cond (labels (format "%s (one or more of: %s; separated by commas) "
                                             prompt (string-join labels ", ")))
                             ((stringp (plist-get q :placeholder))
                              (format "%s (%s) " prompt (plist-get q :placeholder)))
                             (t (concat prompt " ")))))))
              (unless (equal value "")
                (puthash (number-to-string i) value answers))
              (setq i (1+ i))))
          answers)
      (quit nil))))

(defun agentls--ask (entry)
  "Ask the question of ENTRY in the minibuffer and answer it."
  (if (equal (plist-get (agentls--confirmation-details entry) :type) "ask_user")
      (let (answers)
        (unwind-protect
            (unless (agentls--confirmation-done entry)
              (discard-input)
              (setq answers (agentls--ask-user
                             (plist-get (agentls--confirmation-details entry) :questions))))
          (setq agentls--modal-busy nil)
          (if answers
              (agentls--answer entry "proceed_once" nil (list :answers answers))
            (agentls--answer entry "cancel"))
          (agentls--next-modal)))
    (agentls--ask-choice entry)))

(defun agentls--read-choice (entry)
  "Ask for one of the choices of ENTRY with `read-multiple-choice'.
Return the choice, or nil when the user quits."
  (let* ((d (agentls--confirmation-details entry))
         (choices (agentls--choices d))
         (key (condition-case nil
                  (progn
                    ;; Keys typed for something else answer nothing.
                    (discard-input)
                    (read-multiple-choice
                     (agentls--question d (agentls--confirmation-conn entry))
                     (mapcar (lambda (c) (list (nth 0 c) (nth 1 c))) choices)))
                (quit nil))))
    (and key (assq (car key) choices))))

(defun agentls--ask-choice (entry)
  "Ask the question of ENTRY with `read-multiple-choice' and answer it.
Quitting refuses."
  (let (choice)
    (unwind-protect
        (unless (agentls--confirmation-done entry)
          (setq choice (agentls--read-choice entry)))
      (setq agentls--modal-busy nil)
      (if choice
          (agentls--choose entry choice)
        (agentls--refuse entry))
      (agentls--next-modal))))

;;;; Updates: chat, shell output, touched places

(defvar-local agentls--calls nil "Tool calls of this chat: id -> plist.")
(defvar-local agentls--plan-markers nil "(START . END) of this turn's plan.")
(defvar-local agentls--last-kind nil "The kind of the last text inserted.")

(defalias 'agentls--chat-parent-mode
  (if (require 'markdown-mode nil t) 'markdown-mode 'text-mode)
  "The major mode `agentls-chat-mode' derives from.")

(defvar agentls-chat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'agentls)
    (define-key map (kbd "C-c C-k") #'agentls-cancel)
    (define-key map (kbd "C-c C-s") #'agentls-sessions)
    (define-key map (kbd "C-c C-n") #'agentls-new-session)
    (define-key map (kbd "C-c C-a") #'agentls-set-approval-mode)
    (define-key map (kbd "C-c C-o") #'agentls-show-shell-output)
    (define-key map (kbd "TAB") #'forward-button)
    (define-key map (kbd "<backtab>") #'backward-button)
    map)
  "Keys of `agentls-chat-mode'.")

(define-derived-mode agentls-chat-mode agentls--chat-parent-mode "agentls-chat"
  "A conversation with agentls.
\\<agentls-chat-mode-map>\\[agentls] asks (continuing this session), \
\\[agentls-cancel] cancels, \\[agentls-sessions] resumes a stored session.

\\{agentls-chat-mode-map}"
  (setq buffer-read-only t)
  (setq-local truncate-lines nil)
  (setq header-line-format '(:eval (agentls--chat-header)))
  (buffer-disable-undo)
  (visual-line-mode 1))

(defun agentls--chat-header ()
  "The header line of a chat buffer: session, approval mode and keys."
  (let ((conn agentls--chat-conn))
    (concat
     (format "agentls · %s · mode %s · "
             (if agentls--session (format "session %s" agentls--session) "new session")
             (or (and conn (agentls--approval-mode conn)) "default"))
     (if agentls--busy
         (substitute-command-keys "working… \\<agentls-chat-mode-map>\\[agentls-cancel] cancel")
       (substitute-command-keys
        "\\<agentls-chat-mode-map>\\[agentls] ask  \\[agentls-sessions] sessions  \\[agentls-new-session] new  \\[agentls-set-approval-mode] mode")))))

(defun agentls--chat-buffer (conn)
  "CONN's chat buffer, created when missing."
  (let ((buf (agentls--chat conn)))
    (unless (buffer-live-p buf)
      (setq buf (get-buffer-create
                 (format "*agentls: %s*" (file-name-nondirectory
                                          (directory-file-name (agentls--root conn))))))
      (with-current-buffer buf
        (unless (derived-mode-p 'agentls-chat-mode) (agentls-chat-mode))
        (setq default-directory (agentls--root conn))
        (setq agentls--chat-conn conn
              agentls--calls (make-hash-table :test #'equal)))
      (setf (agentls--chat conn) buf))
    buf))

(defun agentls--chat-insert (conn text &optional face kind)
  "Append TEXT (with FACE) to CONN's chat.
KIND, when non-nil, names what it is (text, thought, heading, ...)."
  (with-current-buffer (agentls--chat-buffer conn)
    (let ((inhibit-read-only t)
          (follow (mapcar (lambda (w) (cons w (= (window-point w) (point-max))))
                          (get-buffer-window-list (current-buffer) nil t))))
      (save-excursion
        (goto-char (point-max))
        (insert (if face (propertize text 'face face 'font-lock-face face) text)))
      (dolist (f follow)
        (when (cdr f) (set-window-point (car f) (point-max))))
      (when (= (point) (- (point-max) (length text))) (goto-char (point-max)))
      (when kind (setq agentls--last-kind kind)))))

(defun agentls--chat-newline (conn)
  "Make sure CONN's chat ends at the beginning of a line."
  (with-current-buffer (agentls--chat-buffer conn)
    (unless (or (= (point-max) (point-min))
                (eq (char-before (point-max)) ?\n))
      (agentls--chat-insert conn "\n"))))

(defun agentls--chat-separate (conn)
  "Make sure CONN's chat ends with an empty line (unless it is empty)."
  (with-current-buffer (agentls--chat-buffer conn)
    (let ((tail (buffer-substring-no-properties (max (point-min) (- (point-max) 2)) (point-max))))
      (cond ((= (point-min) (point-max)))
            ((equal tail "\n\n"))
            ((string-suffix-p "\n" tail) (agentls--chat-insert conn "\n"))
            (t (agentls--chat-insert conn "\n\n"))))))

(defun agentls--chat-for-session (conn session)
  "CONN's chat buffer if SESSION belongs to it (adopting a new session)."
  (let ((buf (agentls--chat conn)))
    (when (buffer-live-p buf)
      (with-current-buffer buf
        (cond ((equal agentls--session session) buf)
              ((and agentls--busy (null agentls--session)
                    (not (member session '("" "editor"))))
               (setq agentls--session session)
               buf))))))

(defun agentls--update (conn params)
  "Handle the agentls/update PARAMS of CONN."
  (let* ((session (plist-get params :session))
         (u (plist-get params :update))
         (kind (plist-get u :kind))
         (chat (agentls--chat-for-session conn session)))
    (agentls--shell-update conn u)
    (agentls--touch-update conn u)
    ;; The session is free when its turn_end is sent (docs/protocol.md): a
    ;; new prompt or session may follow at once, before the prompt's response.
    (when (and chat (equal kind "turn_end"))
      (with-current-buffer chat
        (setq agentls--busy nil
              agentls--turn nil))
      (force-mode-line-update t))
    (when chat
      (agentls--chat-render conn u))
    (when (equal kind "turn_end")
      (agentls--clear-touched conn))))

(defun agentls--chat-render (conn u)
  "Show the update U in CONN's chat: a live one, or one of a resumed session."
  (let ((kind (plist-get u :kind))
        (chat (agentls--chat-buffer conn)))
    (pcase kind
      ("user_message"
       (agentls--chat-newline conn)
       (agentls--chat-insert conn "## You\n\n" 'agentls-heading)
       (agentls--chat-insert conn (concat (plist-get u :text) "\n\n"))
       (agentls--chat-insert conn "## agentls\n\n" 'agentls-heading 'heading))
      ("message_chunk"
       (when (memq (buffer-local-value 'agentls--last-kind chat) '(thought tool plan))
         (agentls--chat-separate conn))
       (agentls--chat-insert conn (plist-get u :text) nil 'text))
      ("thought_chunk"
       (when (memq (buffer-local-value 'agentls--last-kind chat) '(text tool plan))
         (agentls--chat-separate conn))
       (agentls--chat-insert conn (plist-get u :text) 'agentls-thought 'thought))
      ("tool_call" (agentls--chat-tool-call conn u))
      ("tool_call_update" (agentls--chat-tool-update conn u))
      ("plan" (agentls--chat-plan conn u))
      ("compression" (agentls--chat-newline conn)
       (agentls--chat-insert conn (format "_%s_\n" (plist-get u :text)) 'agentls-status))
      ("turn_end" (agentls--chat-turn-end conn u)))))

(defun agentls--status-text (status)
  "The words for STATUS in the chat."
  (pcase status
    ("pending" "pending")
    ("awaiting_approval" "awaiting approval")
    ("in_progress" "running")
    ("completed" "done")
    ("failed" "failed")
    ("cancelled" "cancelled")
    (_ (or status ""))))

(defun agentls--location-button (conn loc)
  "Insert a button for the Location LOC of CONN."
  (let* ((file (agentls--uri-to-path (plist-get loc :uri)))
         (line (let ((r (plist-get loc :range)))
                 (and r (1+ (plist-get (plist-get r :start) :line)))))
         (label (concat (file-relative-name file (agentls--root conn))
                        (if line (format ":%d" line) ""))))
    (insert "  - ")
    (insert-text-button label
                        'action (lambda (_) (agentls--visit file line))
                        'agentls-file file 'agentls-line line
                        'follow-link t
                        'help-echo "RET: visit this place")
    (insert "\n")))

(defun agentls--visit (file line)
  "Show FILE at LINE in another window."
  (let ((buf (find-file-noselect file)))
    (pop-to-buffer buf t)
    (when line
      (goto-char (point-min))
      (forward-line (1- line)))))

(defun agentls--chat-tool-call (conn u)
  "Insert the tool call U in CONN's chat."
  (if (memq (buffer-local-value 'agentls--last-kind (agentls--chat-buffer conn))
            '(tool heading nil))
      (agentls--chat-newline conn)
    ;; A list right after a paragraph would continue it in Markdown.
    (agentls--chat-separate conn))
  (with-current-buffer (agentls--chat-buffer conn)
    (let ((inhibit-read-only t)
          (id (plist-get u :toolCallId)))
      (save-excursion
        (goto-char (point-max))
        (insert (propertize (format "- %s: %s" (plist-get u :name)
                                    (or (plist-get u :title) ""))
                            'font-lock-face 'agentls-tool-call 'face 'agentls-tool-call))
        (insert " · ")
        (let ((start (point-marker)))
          (insert (propertize (agentls--status-text (plist-get u :status))
                              'font-lock-face 'agentls-status 'face 'agentls-status))
          (let ((end (point-marker)))
            (insert "\n")
            (seq-doseq (loc (plist-get u :locations))
              (agentls--location-button conn loc))
            (puthash id (list :start start :end end :block-end (point-marker)
                              :name (plist-get u :name))
                     agentls--calls))))
      (setq agentls--last-kind 'tool)
      (dolist (w (get-buffer-window-list (current-buffer) nil t))
        (set-window-point w (point-max))))))

(defun agentls--chat-tool-update (conn u)
  "Update the tool call line of U in CONN's chat."
  (with-current-buffer (agentls--chat-buffer conn)
    (let* ((call (gethash (plist-get u :toolCallId) agentls--calls))
           (status (plist-get u :status))
           (inhibit-read-only t))
      (when call
        (when status
          (save-excursion
            (goto-char (plist-get call :start))
            (delete-region (plist-get call :start) (plist-get call :end))
            (insert (propertize (agentls--status-text status)
                                'font-lock-face (if (equal status "failed") 'agentls-error 'agentls-status)
                                'face (if (equal status "failed") 'agentls-error 'agentls-status)))
            (set-marker (plist-get call :end) (point))))
        ;; What the user's hooks decided about the call, as the other clients
        ;; show it on the call's card, whatever its outcome.
        (let ((hooks (plist-get u :hooks)))
          (when (and hooks (> (length hooks) 0))
            (save-excursion
              (goto-char (plist-get call :block-end))
              (seq-doseq (line hooks)
                (insert (propertize (format "  %s\n" (string-trim line))
                                    'font-lock-face 'agentls-status 'face 'agentls-status)))
              (set-marker (plist-get call :block-end) (point)))))
        (when (equal status "failed")
          (let* ((err (plist-get u :error))
                 (msg (or (plist-get err :message)
                          (plist-get (plist-get u :content) :text)
                          "failed")))
            (save-excursion
              (goto-char (plist-get call :block-end))
              (insert (propertize (format "  error: %s\n" (string-trim msg))
                                  'font-lock-face 'agentls-error 'face 'agentls-error))
              (set-marker (plist-get call :block-end) (point)))))))))

(defun agentls--chat-plan (conn u)
  "Show the plan U in CONN's chat, replacing this turn's earlier plan."
  (with-current-buffer (agentls--chat-buffer conn)
    (let ((inhibit-read-only t)
          (text (concat "Plan:\n"
                        (mapconcat (lambda (e)
                                     (format "  [%s] %s"
                                             (pcase (plist-get e :status)
                                               ("completed" "x") ("in_progress" ">")
                                               ("cancelled" "-") ("blocked" "!") (_ " "))
                                             (plist-get e :content)))
                                   (plist-get u :entries) "\n")
                        "\n")))
      (if (and agentls--plan-markers (marker-buffer (car agentls--plan-markers)))
          (save-excursion
            (goto-char (car agentls--plan-markers))
            (delete-region (car agentls--plan-markers) (cdr agentls--plan-markers))
            (insert text)
            (set-marker (cdr agentls--plan-markers) (point)))
        (if (memq agentls--last-kind '(heading nil))
            (agentls--chat-newline conn)
          (agentls--chat-separate conn))
        (save-excursion
          (goto-char (point-max))
          (let ((start (point-marker)))
            (insert text)
            (setq agentls--plan-markers (cons start (point-marker))))))
      (setq agentls--last-kind 'plan))))

(defun agentls--chat-turn-end (conn u)
  "Note the end of the turn U in CONN's chat."
  (agentls--chat-newline conn)
  (let* ((usage (plist-get u :usage))
         (tokens (if usage (format " · tokens: %s in, %s out"
                                   (plist-get usage :inputTokens)
                                   (plist-get usage :outputTokens))
                   "")))
    (agentls--chat-insert conn (format "\n_turn ended: %s%s_\n\n"
                                       (plist-get u :stopReason) tokens)
                          'agentls-status 'end))
  (with-current-buffer (agentls--chat-buffer conn)
    (setq agentls--plan-markers nil)))

;;;;; Shell output

(defvar agentls-shell-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-k") #'agentls-cancel)
    map)
  "Keys of `agentls-shell-mode'.")

(define-derived-mode agentls-shell-mode compilation-mode "agentls-shell"
  "Output of the agent's shell commands; errors are clickable.
\\<agentls-shell-mode-map>\\[agentls-cancel] cancels the running command."
  (buffer-disable-undo)
  (setq-local compilation-scroll-output t)
  ;; The "$ command" lines are not errors, whatever the command says.
  (setq-local compilation-transform-file-match-alist
              (cons '("\\`\\$ " nil) compilation-transform-file-match-alist)))

(defun agentls--shell-buffer (conn)
  "CONN's shell output buffer."
  (let ((buf (get-buffer-create
              (format "*agentls shell: %s*"
                      (file-name-nondirectory (directory-file-name (agentls--root conn)))))))
    (with-current-buffer buf
      (unless (derived-mode-p 'agentls-shell-mode)
        (agentls-shell-mode)
        (setq default-directory (agentls--root conn))))
    buf))

(defun agentls--shell-insert (conn text &optional face)
  "Append TEXT (with FACE) to CONN's shell output buffer."
  (with-current-buffer (agentls--shell-buffer conn)
    (let ((inhibit-read-only t)
          (at-end (= (point) (point-max))))
      (save-excursion
        (goto-char (point-max))
        (insert (if face (propertize text 'font-lock-face face 'face face) text)))
      (when at-end (goto-char (point-max)))
      (dolist (w (get-buffer-window-list (current-buffer) nil t))
        (when (>= (window-point w) (- (point-max) (length text)))
          (set-window-point w (point-max)))))))

(defun agentls--shell-update (conn u)
  "Stream the shell output of the update U into CONN's shell buffer."
  (let* ((kind (plist-get u :kind))
         (id (plist-get u :toolCallId))
         (calls (agentls--shell-calls conn)))
    (cond
     ((and (equal kind "tool_call") (equal (plist-get u :toolKind) "execute"))
      (puthash id (list :started nil :input (plist-get u :rawInput)) calls))
     ((and (equal kind "tool_call_update") (gethash id calls))
      (let* ((call (gethash id calls))
             (input (plist-get call :input))
             (output (plist-get u :output))
             (status (plist-get u :status)))
        (when (and (or output (equal status "in_progress")) (not (plist-get call :started)))
          (plist-put call :started t)
          (let ((buf (agentls--shell-buffer conn))
                (dir (plist-get input :dir_path)))
            (with-current-buffer buf
              (setq default-directory
                    (file-name-as-directory
                     (expand-file-name (or dir ".") (agentls--root conn)))))
            (agentls--shell-insert conn (format "\n$ %s\n" (plist-get input :command))
                                   'agentls-command)
            (when agentls-display-shell-output
              (display-buffer buf '(nil (inhibit-same-window . t))))))
        (when (and output (not (string-empty-p output)))
          (agentls--shell-insert conn (ansi-color-apply output)))
        (when (member status '("completed" "failed" "cancelled"))
          (if (not (plist-get call :started))
              (remhash id calls)
            (with-current-buffer (agentls--shell-buffer conn)
              (unless (eq (char-before (point-max)) ?\n)
                (agentls--shell-insert conn "\n"))
              (let ((start (copy-marker (point-max))))
                ;; The exit code comes with the progress's end (see
                ;; `agentls--shell-progress-end'), before or after this.
                (agentls--shell-insert
                 conn (format "[%s]\n" (or (plist-get call :end-message)
                                           (agentls--status-text status)))
                 'agentls-status)
                (if (plist-get call :end-message)
                    (remhash id calls)
                  (plist-put call :footer (cons start (copy-marker (1- (point-max)))))
                  (plist-put call :done t)))))))))))

(defun agentls--shell-progress-end (conn token message)
  "Show the end MESSAGE of the progress TOKEN in CONN's shell buffer.
The message has the exit code (\"done: Exit code 1\"), which the tool
call's updates do not.  agentls names a call's progress
\"agentls/TOOLCALLID/N\"; other tokens are not shown."
  (when (and message (stringp token)
             (string-match "\\`agentls/\\(.+\\)/[0-9]+\\'" token))
    (let* ((id (match-string 1 token))
           (calls (agentls--shell-calls conn))
           (call (gethash id calls)))
      (when call
        (if (not (plist-get call :done))
            (plist-put call :end-message message)
          (remhash id calls)
          (let ((footer (plist-get call :footer)))
            (when (buffer-live-p (marker-buffer (car footer)))
              (with-current-buffer (marker-buffer (car footer))
                (let ((inhibit-read-only t))
                  (save-excursion
                    (goto-char (car footer))
                    (delete-region (car footer) (cdr footer))
                    (insert (propertize (format "[%s]" message)
                                        'font-lock-face 'agentls-status 'face 'agentls-status))))))))))))

(defun agentls-show-shell-output ()
  "Show the output of the agent's shell commands."
  (interactive)
  (let ((conn (agentls--any-connection)))
    (unless conn (user-error "No agentls server runs"))
    (pop-to-buffer (agentls--shell-buffer conn))))

;;;;; Progress and the mode line

(defun agentls--progress-notification (conn params)
  "Track the $/progress PARAMS of CONN."
  (let* ((token (plist-get params :token))
         (value (plist-get params :value))
         (table (agentls--progress conn)))
    (pcase (plist-get value :kind)
      ("begin" (puthash token (cons (plist-get value :title) (plist-get value :message)) table))
      ("report" (let ((cur (gethash token table)))
                  (puthash token (cons (car cur) (or (plist-get value :message) (cdr cur))) table)))
      ("end" (remhash token table)
       (agentls--shell-progress-end conn token (plist-get value :message))))
    (force-mode-line-update t)))

(defun agentls-mode-line ()
  "The mode line text of agentls: progress and waiting questions."
  (let ((parts nil))
    (maphash
     (lambda (_ conn)
       (when (agentls--live-p conn)
         (maphash (lambda (_ p)
                    (push (concat (truncate-string-to-width (or (car p) "running") 24 nil nil "…")
                                  (if (and (cdr p) (not (string-empty-p (cdr p))))
                                      (concat ": " (truncate-string-to-width (cdr p) 48 nil nil "…"))
                                    ""))
                          parts))
                  (agentls--progress conn))
         (let ((chat (agentls--chat conn)))
           (when (and (buffer-live-p chat) (buffer-local-value 'agentls--busy chat)
                      (null parts))
             (push "working" parts)))))
     agentls--connections)
    (let ((n (length (agentls--pending-confirmations))))
      (when (> n 0)
        (push (propertize (format "%d waiting for you" n)
                          'mouse-face 'mode-line-highlight
                          'help-echo "mouse-1: show what waits (agentls-show-pending)"
                          'local-map (make-mode-line-mouse-map 'mouse-1 #'agentls-show-pending))
              parts)))
    (if parts
        (concat " [agentls: " (mapconcat #'identity parts " | ") "]")
      "")))

;;;###autoload
(defun agentls-show-pending ()
  "Show the oldest question of the agent that waits for an answer.
An edit's diff buffer is shown again; a shell command is asked again."
  (interactive)
  (let ((entry (car (sort (agentls--pending-confirmations)
                          (lambda (a b) (< (agentls--confirmation-request-id a)
                                           (agentls--confirmation-request-id b)))))))
    (cond ((null entry) (message "agentls: nothing waits for you"))
          ((buffer-live-p (agentls--confirmation-diff-buffer entry))
           (pop-to-buffer (agentls--confirmation-diff-buffer entry)))
          ((and (not (memq entry agentls--modal-queue)) (not agentls--modal-busy))
           (setq agentls--modal-queue (append agentls--modal-queue (list entry)))
           (agentls--next-modal))
          (t (message "agentls: the question is being asked")))))

(defvar agentls--mode-line-construct '(:eval (agentls-mode-line))
  "The mode line construct of agentls.")
(put 'agentls--mode-line-construct 'risky-local-variable t)

(defun agentls--mode-line-install ()
  "Show agentls's progress in the mode line."
  (unless (and (listp global-mode-string)
               (memq 'agentls--mode-line-construct global-mode-string))
    ;; A list that starts with a symbol would be a conditional construct:
    ;; start it with a string.
    (setq global-mode-string
          (append (cond ((null global-mode-string) (list ""))
                        ((and (listp global-mode-string) (stringp (car global-mode-string)))
                         global-mode-string)
                        ((listp global-mode-string) (cons "" global-mode-string))
                        (t (list "" global-mode-string)))
                  '(agentls--mode-line-construct)))))

;;;;; Flymake: the places a turn touches, the shell's errors

(defvar-local agentls--flymake-ours nil
  "Non-nil when agentls turned `flymake-mode' on in this buffer.")

(defvar-local agentls--flymake-report nil
  "The report function Flymake gave `agentls-flymake-backend'.")

(defun agentls--file-key (file)
  "The key of FILE in the per-file tables."
  (expand-file-name file))

(defun agentls--touch-update (conn u)
  "Remember the places of the tool call update U of CONN."
  (when (member (plist-get u :kind) '("tool_call" "tool_call_update"))
    (let ((locs (plist-get u :locations))
          (title (or (plist-get u :title) (plist-get u :name) "tool call"))
          (changed nil))
      (seq-doseq (loc locs)
        (let* ((file (agentls--file-key (agentls--uri-to-path (plist-get loc :uri))))
               (r (plist-get loc :range))
               (line (if r (plist-get (plist-get r :start) :line) 0))
               (have (gethash file (agentls--touched conn)))
               (item (cons line (format "agentls: %s" title))))
          (unless (member item have)
            (puthash file (cons item have) (agentls--touched conn))
            (push file changed))))
      (dolist (file (delete-dups changed))
        (agentls--refresh-flymake file)))))

(defun agentls--clear-touched (conn)
  "Forget the places CONN's turn touched, and take their notes down."
  (let (files)
    (maphash (lambda (f _) (push f files)) (agentls--touched conn))
    (clrhash (agentls--touched conn))
    (dolist (f files) (agentls--refresh-flymake f))))

(defun agentls--publish-diagnostics (conn params)
  "Keep the agentls/shell diagnostics of the PARAMS from CONN.
The server's notes on running calls duplicate the touched places,
and failures go to the chat, so only the shell's findings are shown."
  (let* ((file (agentls--file-key (agentls--uri-to-path (plist-get params :uri))))
         (diags (cl-remove-if-not
                 (lambda (d) (equal (plist-get d :source) "agentls/shell"))
                 (append (plist-get params :diagnostics) nil))))
    (if diags
        (puthash file diags (agentls--shell-diags conn))
      (remhash file (agentls--shell-diags conn)))
    (agentls--refresh-flymake file)))

(defun agentls--diagnostics-for (file)
  "The Flymake diagnostics for FILE in the current buffer."
  (let (out)
    (maphash
     (lambda (_ conn)
       (when (agentls--live-p conn)
         (dolist (item (gethash file (agentls--touched conn)))
           (let* ((beg (agentls--point (list :line (car item) :character 0)))
                  (end (save-excursion (goto-char beg) (line-end-position))))
             (push (flymake-make-diagnostic (current-buffer) beg (max end (min (point-max) (1+ beg)))
                                            :note (cdr item))
                   out)))
         (dolist (d (gethash file (agentls--shell-diags conn)))
           (let* ((r (plist-get d :range))
                  (beg (agentls--point (plist-get r :start)))
                  (end (agentls--point (plist-get r :end))))
             (when (= beg end)
               (setq end (save-excursion (goto-char beg) (line-end-position))))
             (push (flymake-make-diagnostic
                    (current-buffer) beg (max end (min (point-max) (1+ beg)))
                    (pcase (plist-get d :severity) (1 :error) (2 :warning) (_ :note))
                    (format "agentls/shell: %s" (plist-get d :message)))
                   out)))))
     agentls--connections)
    out))

(defun agentls-flymake-backend (report-fn &rest _)
  "Flymake backend of agentls: the places a turn touches.
Call REPORT-FN with them now and whenever they change."
  (setq agentls--flymake-report report-fn)
  (funcall report-fn
           (and buffer-file-name (agentls--diagnostics-for (agentls--file-key buffer-file-name)))
           :region (cons (point-min) (point-max))))

(defun agentls--refresh-flymake (file)
  "Report agentls's diagnostics of FILE to Flymake, if FILE is visited."
  (let ((buf (find-buffer-visiting file)))
    (when (and buf agentls-flymake)
      (with-current-buffer buf
        (let ((diags (agentls--diagnostics-for file)))
          ;; Nothing to show and nothing shown: leave the buffer alone.
          (when (or diags agentls--flymake-report agentls--flymake-ours)
            (unless (memq #'agentls-flymake-backend flymake-diagnostic-functions)
              (add-hook 'flymake-diagnostic-functions #'agentls-flymake-backend nil t)
              (setq agentls--flymake-report nil))
            (cond ((and (not flymake-mode) diags)
                   ;; Flymake was off: run agentls's backend alone, and
                   ;; turn it off again when the notes are gone.
                   (setq-local flymake-diagnostic-functions (list #'agentls-flymake-backend))
                   (setq agentls--flymake-ours t)
                   (flymake-mode 1)
                   (flymake-start))
                  ((and (null diags) flymake-mode agentls--flymake-ours)
                   (flymake-mode -1)
                   (kill-local-variable 'flymake-diagnostic-functions)
                   (setq agentls--flymake-ours nil))
                  ((and flymake-mode agentls--flymake-report)
                   (save-restriction
                     (widen)
                     (condition-case nil
                         (funcall agentls--flymake-report diags
                                  :region (cons (point-min) (point-max)) :force t)
                       (error (flymake-start)))))
                  (flymake-mode (flymake-start)))))))))

;;;; Commands

(defun agentls--region-params ()
  "The uri and range of the current buffer and region, as a plist.
With a region, the Flymake diagnostics of its lines go with it."
  (when buffer-file-name
    (append (list :uri (agentls--buffer-uri))
            (when (use-region-p)
              (append
               (list :range (list :start (agentls--lsp-position (region-beginning))
                                  :end (agentls--lsp-position (region-end))))
               (when-let* ((text (agentls--diagnostics-text (region-beginning) (region-end))))
                 (list :diagnostic text)))))))

(defun agentls--diagnostics-text (beg end)
  "The Flymake diagnostics of the lines from BEG to END, agentls's own left out.
One \"line N: severity: message (source)\" line each, or nil."
  (when (bound-and-true-p flymake-mode)
    (let* ((from (save-excursion (goto-char beg) (line-beginning-position)))
           (to (save-excursion (goto-char end) (line-end-position)))
           (lines
            (cl-loop for d in (flymake-diagnostics from to)
                     unless (eq (flymake-diagnostic-backend d) 'agentls-flymake-backend)
                     collect
                     (let* ((lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d)))
                            (sev (or (plist-get lsp :severity)
                                     (agentls--diagnostic-severity (flymake-diagnostic-type d))))
                            (source (plist-get lsp :source)))
                       (format "line %d: %s: %s%s"
                               (line-number-at-pos (flymake-diagnostic-beg d))
                               (nth (1- (min (max sev 1) 4)) '("error" "warning" "info" "hint"))
                               (or (plist-get lsp :message) (flymake-diagnostic-text d))
                               (if source (format " (%s)" source) ""))))))
      (and lines (mapconcat #'identity lines "\n")))))

(defun agentls--context-note (params)
  "A line describing the context PARAMS of a prompt."
  (let ((uri (plist-get params :uri))
        (range (plist-get params :range)))
    (when uri
      (format "_context: %s%s_\n\n"
              (file-name-nondirectory (agentls--uri-to-path uri))
              (if range
                  (let* ((start (plist-get range :start))
                         (end (plist-get range :end))
                         (last (plist-get end :line)))
                    ;; As the server reads it: a range ending at the start of a
                    ;; later line ends on the line before.
                    (when (and (zerop (plist-get end :character))
                               (> last (plist-get start :line)))
                      (setq last (1- last)))
                    (format ":%d-%d" (1+ (plist-get start :line)) (1+ last)))
                "")))))

(defvar-local agentls--commands-conn nil
  "The connection whose custom commands the minibuffer of `agentls' completes.")

(defun agentls-commands (conn)
  "The custom commands of CONN, as (COMMAND . DESCRIPTION) pairs.
These are Gemini CLI's .toml commands agentls found (`/git:commit'); a
prompt that starts with one runs it, agentls expanding it."
  (when (agentls--live-p conn)
    (let ((list (jsonrpc-request conn :workspace/executeCommand
                                 (list :command "agentls.listPrompts"
                                       :arguments (vector (make-hash-table)))
                                 :timeout 5)))
      (cl-loop for p across list
               for command = (plist-get p :command)
               when (stringp command)
               collect (cons command (or (plist-get p :description) ""))))))

(defun agentls--command-capf ()
  "Complete a custom command at the start of the prompt in the minibuffer."
  (let* ((start (minibuffer-prompt-end))
         (end (save-excursion (goto-char start) (skip-chars-forward "^ \t\n") (point))))
    (when (and (eq (char-after start) ?/) (<= (point) end))
      (let ((commands (ignore-errors (agentls-commands agentls--commands-conn))))
        (list start end commands
              :annotation-function
              (lambda (c) (let ((d (cdr (assoc c commands))))
                            (if (and d (not (string-empty-p d))) (concat "  " d) "")))
              :exclusive 'no)))))

;;;###autoload
(defun agentls (prompt &optional context)
  "Ask agentls PROMPT; the answer streams into the chat buffer.
With an active region, the region is sent as context; in a file
buffer, the file is.  In the chat buffer, the chat's session goes on.
With a prefix argument, write the prompt in a buffer of its own
\(see `agentls-compose').
From Lisp, CONTEXT is the context to send instead: a plist with :uri
and optionally :range and :diagnostic."
  (interactive
   (list (if current-prefix-arg
             :compose
           (let ((conn (agentls--any-connection)))
             (minibuffer-with-setup-hook
                 (lambda ()
                   (setq-local agentls--commands-conn conn)
                   (add-hook 'completion-at-point-functions #'agentls--command-capf nil t)
                   (local-set-key (kbd "TAB") #'completion-at-point))
               (read-string (if (use-region-p) "agentls (region): " "agentls: ")
                            nil 'agentls--prompt-history))))))
  (if (eq prompt :compose)
      (agentls-compose)
    (agentls--prompt prompt context)))

(defvar-local agentls--compose-origin nil
  "The buffer a compose buffer was opened from.")
(defvar-local agentls--compose-context nil
  "The context the compose buffer's prompt is sent with.")

(defvar agentls-compose-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'agentls-compose-send)
    (define-key map (kbd "C-c C-k") #'agentls-compose-abort)
    map)
  "Keys of `agentls-compose-mode'.")

(define-derived-mode agentls-compose-mode text-mode "agentls-compose"
  "Write a prompt for agentls.
\\<agentls-compose-mode-map>\\[agentls-compose-send] sends it, \\[agentls-compose-abort] \
throws it away."
  (setq header-line-format
        (substitute-command-keys
         "agentls prompt: \\<agentls-compose-mode-map>\\[agentls-compose-send] send  \
\\[agentls-compose-abort] abort")))

;;;###autoload
(defun agentls-compose ()
  "Write a (multi-line) prompt in a buffer, then send it.
\\<agentls-compose-mode-map>\\[agentls-compose-send] sends it.
The region or file of the current buffer is the prompt's context, as
for `agentls'."
  (interactive)
  (let ((origin (current-buffer))
        (context (unless (derived-mode-p 'agentls-chat-mode) (agentls--region-params)))
        (buf (get-buffer-create "*agentls compose*")))
    (deactivate-mark)
    (with-current-buffer buf
      (unless (derived-mode-p 'agentls-compose-mode) (agentls-compose-mode))
      (setq agentls--compose-origin origin
            agentls--compose-context context))
    (pop-to-buffer buf)
    buf))

(defun agentls-compose-send ()
  "Send the prompt of this compose buffer."
  (interactive)
  (let ((text (string-trim (buffer-substring-no-properties (point-min) (point-max))))
        (origin agentls--compose-origin)
        (context agentls--compose-context))
    (when (string-empty-p text) (user-error "Empty prompt"))
    (let ((buf (current-buffer)))
      (quit-window nil (get-buffer-window buf))
      (kill-buffer buf))
    (with-current-buffer (if (buffer-live-p origin) origin (current-buffer))
      (agentls--prompt text context))))

(defun agentls-compose-abort ()
  "Throw the prompt of this compose buffer away."
  (interactive)
  (let ((buf (current-buffer)))
    (quit-window nil (get-buffer-window buf))
    (kill-buffer buf)))

(defun agentls--prompt (prompt context)
  "Send PROMPT with CONTEXT (see `agentls') to the chat's session."
  (when (string-empty-p (string-trim prompt))
    (user-error "Empty prompt"))
  (let* ((conn (if (and (derived-mode-p 'agentls-chat-mode) (agentls--live-p agentls--chat-conn))
                   agentls--chat-conn
                 (agentls--connection)))
         (context (or context
                      (unless (derived-mode-p 'agentls-chat-mode) (agentls--region-params))))
         (chat (agentls--chat-buffer conn))
         (session (buffer-local-value 'agentls--session chat))
         (turn (list prompt)))
    (when (buffer-local-value 'agentls--busy chat)
      (user-error "The agent is still answering; `agentls-cancel' stops it"))
    (with-current-buffer chat
      (setq agentls--busy t
            agentls--turn turn))
    (agentls--chat-newline conn)
    (agentls--chat-insert conn "## You\n\n" 'agentls-heading)
    (agentls--chat-insert conn (concat prompt "\n\n"))
    (when-let* ((note (agentls--context-note context)))
      (agentls--chat-insert conn note 'agentls-status))
    (agentls--chat-insert conn "## agentls\n\n" 'agentls-heading 'heading)
    (when agentls-display-chat
      (display-buffer chat '(nil (inhibit-same-window . t))))
    (deactivate-mark)
    (agentls--async
     conn :agentls/prompt
     (append (list :prompt prompt) (when session (list :session session)) context)
     (lambda (result)
       ;; Usually its turn_end has freed the chat already, and the person may
       ;; have started a new session or prompt since.
       (with-current-buffer (agentls--chat-buffer conn)
         (when (eq agentls--turn turn)
           (setq agentls--busy nil
                 agentls--turn nil
                 agentls--session (plist-get result :session))))
       (when (equal (plist-get result :stopReason) "error")
         (agentls--chat-newline conn)
         (agentls--chat-insert conn (format "error: %s\n"
                                            (or (plist-get (plist-get result :error) :message)
                                                "the model failed"))
                               'agentls-error))
       (force-mode-line-update t))
     (lambda (err)
       (with-current-buffer (agentls--chat-buffer conn)
         (when (eq agentls--turn turn)
           (setq agentls--busy nil
                 agentls--turn nil)))
       (agentls--chat-newline conn)
       (agentls--chat-insert conn (format "error: %s\n\n" (plist-get err :message))
                             'agentls-error)
       (force-mode-line-update t)))
    (force-mode-line-update t)
    chat))

(defvar agentls--prompt-history nil "Prompts given to `agentls'.")


;;;###autoload
(defun agentls-chat ()
  "Show the chat buffer of this workspace."
  (interactive)
  (pop-to-buffer (agentls--chat-buffer (agentls--connection))))

;;;###autoload
(defun agentls-cancel (&optional all)
  "Cancel what agentls is doing for this workspace's chat.
With prefix argument ALL, or when the chat has no session yet, cancel
every prompt and tool call of the server."
  (interactive "P")
  (let* ((conn (if (derived-mode-p 'agentls-chat-mode) agentls--chat-conn
                 (agentls--any-connection)))
         (chat (and conn (agentls--chat conn)))
         (session (and (not all) (buffer-live-p chat)
                       (buffer-local-value 'agentls--session chat))))
    (unless (agentls--live-p conn) (user-error "No agentls server runs"))
    (jsonrpc-notify conn :agentls/cancel (if session (list :session session) (make-hash-table)))
    (message "agentls: cancelling%s" (if session "" " everything"))))

;;;###autoload
(defun agentls-new-session ()
  "Start a new session: the next prompt does not continue the current one."
  (interactive)
  (let* ((conn (agentls--connection))
         (chat (agentls--chat-buffer conn)))
    (when (buffer-local-value 'agentls--busy chat)
      (user-error "The agent is still answering; `agentls-cancel' stops it"))
    (with-current-buffer chat (setq agentls--session nil))
    (agentls--chat-newline conn)
    (agentls--chat-insert conn "\n---\n_new session_\n\n" 'agentls-status)))

;;;###autoload
(defun agentls-sessions ()
  "Choose a stored session to continue in the chat."
  (interactive)
  (let ((conn (agentls--connection)))
    (when (buffer-local-value 'agentls--busy (agentls--chat-buffer conn))
      (user-error "The agent is still answering; `agentls-cancel' stops it"))
    (agentls--async
     conn :agentls/sessions (make-hash-table)
     (lambda (sessions)
       (if (zerop (length sessions))
           (message "agentls: no stored sessions")
         (run-at-time 0 nil #'agentls--choose-session conn sessions))))))

(defun agentls--choose-session (conn sessions)
  "Let the user pick one of SESSIONS to continue on CONN."
  (let* ((table (cl-loop for s across sessions
                         collect (cons (format "%s  %s  (%s prompts)"
                                               (substring (or (plist-get s :updated) "") 0
                                                          (min 16 (length (or (plist-get s :updated) ""))))
                                               (plist-get s :title)
                                               (plist-get s :prompts))
                                       (plist-get s :id))))
         (choice (completing-read "agentls session: "
                                  (lambda (string pred action)
                                    (if (eq action 'metadata)
                                        '(metadata (display-sort-function . identity))
                                      (complete-with-action action table string pred)))
                                  nil t))
         (id (cdr (assoc choice table))))
    (when id
      (let ((chat (agentls--chat-buffer conn)))
        (with-current-buffer chat (setq agentls--session id))
        (agentls--chat-newline conn)
        (agentls--chat-insert conn (format "\n---\n_resumed session %s_\n\n" id) 'agentls-status)
        (pop-to-buffer chat)
        ;; The conversation so far, as the server stored it.  A server
        ;; without agentls.sessionHistory leaves the note alone.
        (agentls--async
         conn :workspace/executeCommand
         (list :command "agentls.sessionHistory" :arguments (vector (list :session id)))
         (lambda (result)
           (when (equal (buffer-local-value 'agentls--session chat) id)
             (seq-doseq (u (plist-get result :updates))
               (agentls--chat-render conn u))
             (agentls--chat-newline conn)
             (agentls--chat-insert conn "_end of the resumed conversation_\n\n" 'agentls-status)))
         #'ignore)))))

(defconst agentls-approval-modes '("default" "auto_edit" "yolo" "plan")
  "The approval modes of agentls.")

;;;###autoload
(defun agentls-set-approval-mode (mode)
  "Set agentls's approval MODE for this workspace.
default asks before edits and commands, auto_edit applies edits
without asking, yolo asks nothing, plan only reads."
  (interactive (list (completing-read "agentls approval mode: " agentls-approval-modes nil t)))
  (let ((conn (agentls--connection)))
    (agentls--command conn "agentls.setApprovalMode" (list :mode mode)
                      (lambda (_)
                        (setf (agentls--approval-mode conn) mode)
                        (message "agentls: approval mode %s" mode)))))

;;;###autoload
(defun agentls-fix-diagnostic-at-point ()
  "Ask agentls to fix the Flymake diagnostic at point (from any backend)."
  (interactive)
  (let ((diag (car (flymake-diagnostics (point)))))
    (unless diag (user-error "No diagnostic here"))
    (unless buffer-file-name (user-error "This buffer visits no file"))
    (let* ((beg (save-excursion (goto-char (flymake-diagnostic-beg diag))
                                (line-beginning-position)))
           (end (save-excursion (goto-char (flymake-diagnostic-end diag))
                                (line-end-position)))
           (text (flymake-diagnostic-text diag)))
      (agentls (format "Fix this problem at %s:%d: %s"
                       (file-name-nondirectory buffer-file-name)
                       (line-number-at-pos beg) text)
               (list :uri (agentls--buffer-uri)
                     :range (list :start (agentls--lsp-position beg)
                                  :end (agentls--lsp-position end))
                     :diagnostic text)))))

;;;; The editor's diagnostics for the agent

(defvar agentls--diagnostics-quiet 0.2
  "Seconds the diagnostics must stay unchanged once they changed after an edit.")

(defvar agentls--diagnostics-idle 1.0
  "Seconds without any change after which the diagnostics are taken as they are.")

(defun agentls--diagnostic-severity (type)
  "The LSP severity of the Flymake diagnostic TYPE."
  (let ((category (or (and (symbolp type) (get type 'flymake-category)) type)))
    (pcase category
      ((or :error 'flymake-error) 1)
      ((or :warning 'flymake-warning) 2)
      (_ 3))))

(defun agentls--buffer-diagnostics (buf)
  "The Flymake diagnostics of BUF, agentls's own left out, as LSP diagnostics."
  (if (not (buffer-live-p buf))
      []
    (with-current-buffer buf
      (save-restriction
        (widen)
        (apply #'vector
               (cl-loop
                for d in (and (bound-and-true-p flymake-mode) (flymake-diagnostics))
                unless (eq (flymake-diagnostic-backend d) 'agentls-flymake-backend)
                collect
                (let* ((lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d)))
                       (line (1- (line-number-at-pos (flymake-diagnostic-beg d))))
                       (source (or (plist-get lsp :source)
                                   (let ((b (flymake-diagnostic-backend d)))
                                     (and b (not (eq b 'eglot-flymake-backend))
                                          (format "%s" b))))))
                  (append
                   (list :range (list :start (list :line line :character 0)
                                      :end (list :line line :character 0))
                         :severity (or (plist-get lsp :severity)
                                       (agentls--diagnostic-severity (flymake-diagnostic-type d)))
                         :message (or (plist-get lsp :message) (flymake-diagnostic-text d)))
                   (and source (list :source source))
                   (and (plist-get lsp :code) (list :code (plist-get lsp :code)))))))))))

(defun agentls--diagnostics-signature (bufs)
  "Return a value that differs when the diagnostics of BUFS change."
  (mapcar (lambda (b) (and (buffer-live-p b)
                           (with-current-buffer b
                             (and (bound-and-true-p flymake-mode)
                                  (cl-loop for d in (flymake-diagnostics)
                                           unless (eq (flymake-diagnostic-backend d) 'agentls-flymake-backend)
                                           collect (list (flymake-diagnostic-beg d)
                                                         (flymake-diagnostic-type d)
                                                         (flymake-diagnostic-text d)))))))
          bufs))

(defun agentls--diagnostics-sources-p (bufs)
  "Return non-nil if a Flymake backend other than agentls's is on in one of BUFS."
  (cl-some (lambda (b)
             (and (buffer-live-p b)
                  (with-current-buffer b
                    (and (bound-and-true-p flymake-mode)
                         (cl-some (lambda (f) (and (not (eq f t)) (not (eq f 'agentls-flymake-backend))))
                                  flymake-diagnostic-functions)))))
           bufs))

(defun agentls--report-diagnostics (conn id uris)
  "Send CONN the agentls/diagnostics report ID of URIS (all buffers when empty)."
  (let ((files
         (if (zerop (length uris))
             (cl-loop for b in (buffer-list)
                      for f = (buffer-file-name b)
                      when (and f (buffer-local-value 'flymake-mode b))
                      collect (list :uri (agentls--path-to-uri f)
                                    :diagnostics (agentls--buffer-diagnostics b)))
           (cl-loop for uri across uris
                    collect (list :uri uri
                                  :diagnostics (agentls--buffer-diagnostics
                                                (find-buffer-visiting (agentls--uri-to-path uri))))))))
    (when (agentls--live-p conn)
      (jsonrpc-notify conn :agentls/diagnostics (list :id id :files (apply #'vector files))))))

(defun agentls--collect-diagnostics (conn params)
  "Answer the agentls/collectDiagnostics PARAMS of CONN.
Without :settle, report at once: the state before an edit.  With it,
wait until the diagnostics of the documents have settled (unchanged for
`agentls--diagnostics-quiet' seconds after they changed, or for
`agentls--diagnostics-idle' seconds without a change), at the latest a
little before the server's :waitMs, then report."
  (let* ((id (plist-get params :id))
         (uris (or (plist-get params :uris) []))
         (uris (if (listp uris) (apply #'vector uris) uris)))
    (if (not (eq (plist-get params :settle) t))
        (agentls--report-diagnostics conn id uris)
      (let* ((bufs (cl-loop for uri across uris
                            for b = (find-buffer-visiting (agentls--uri-to-path uri))
                            when b collect b))
             (start (float-time))
             (deadline (+ start (max 0 (- (/ (or (plist-get params :waitMs) 2000) 1000.0) 0.15))))
             (last (agentls--diagnostics-signature bufs))
             (changed nil)
             timer)
        (when (eq (plist-get params :reload) t)
          ;; A shell command changed the files: read the unmodified buffers again.
          (dolist (b bufs)
            (with-current-buffer b
              (unless (or (buffer-modified-p) (verify-visited-file-modtime b))
                (ignore-errors (revert-buffer t t t))))))
        ;; Nothing but agentls reports on these buffers: nothing to wait for.
        (unless (agentls--diagnostics-sources-p bufs)
          (setq deadline start))
        (setq timer
              (run-with-timer
               0.02 0.02
               (lambda ()
                 (condition-case-unless-debug err
                     (let ((now (float-time))
                           (sig (agentls--diagnostics-signature bufs)))
                       (unless (equal sig last)
                         (setq last sig changed now))
                       (when (or (>= now deadline)
                                 (and changed (>= (- now changed) agentls--diagnostics-quiet))
                                 (and (not changed) (>= (- now start) agentls--diagnostics-idle)))
                         (cancel-timer timer)
                         (agentls--report-diagnostics conn id uris)))
                   (error (cancel-timer timer)
                          (message "agentls: collecting diagnostics: %s" (error-message-string err)))))))))))

;;;###autoload
(defun agentls-trust (scope)
  "Trust this workspace's folder, so that its agentls settings apply.
SCOPE is \"folder\", \"parent\" (the parent and everything under it) or
\"revoke\"."
  (interactive (list (completing-read "agentls trust: " '("folder" "parent" "revoke") nil t)))
  (agentls--command (agentls--connection) "agentls.trust" (list :scope scope)
                    (lambda (result)
                      (message "agentls: %s" (or (plist-get result :message) "done")))))

;;;###autoload
(defun agentls-doctor ()
  "Describe agentls's setup: the program, Emacs, jsonrpc and the connection."
  (interactive)
  (let* ((program (car agentls-server-program))
         (found (executable-find program))
         (version (and found (ignore-errors (car (process-lines found "version")))))
         (conn (agentls--connection t))
         (jsonrpc-file (locate-library "jsonrpc")))
    (with-help-window "*agentls doctor*"
      (princ (format "agentls.el on Emacs %s\n\n" emacs-version))
      (princ (format "program: %s -> %s%s\n" (mapconcat #'identity agentls-server-program " ")
                     (or found "NOT FOUND (set `agentls-server-program')")
                     (if version (format " (%s)" version) "")))
      (princ (format "jsonrpc: %s\n" (or jsonrpc-file "not found")))
      (princ (format "markdown-mode: %s\n" (if (locate-library "markdown-mode") "installed (chat uses its faces)"
                                             "not installed (plain text chat)")))
      (princ (format "workspace root here: %s\n" (agentls--current-root)))
      (princ (format "server environment: %S\n\n" agentls-server-environment))
      (if (not conn)
          (princ "No agentls server runs for this workspace; `M-x agentls' starts one.\n")
        (princ (format "connection: %s, %s\n" (jsonrpc-name conn)
                       (if (agentls--ready conn) "initialized" "starting")))
        (princ (format "serverInfo: %S\n" (agentls--server-info conn)))
        (princ (format "approval mode set here: %s\n" (or (agentls--approval-mode conn) "(server's)")))
        (princ (format "open documents: %d\n"
                       (cl-count-if (lambda (b) (eq (buffer-local-value 'agentls--conn b) conn))
                                    (buffer-list))))
        (princ (format "waiting for you: %d\n" (length (agentls--pending-confirmations))))
        (when (agentls--sandbox conn)
          (princ (format "shell commands: %s (`agentls-sandbox' for details)\n"
                         (plist-get (agentls--sandbox conn) :summary))))
        (princ (format "stderr: %s\n" (buffer-name (jsonrpc-stderr-buffer conn))))))))

;;;;; The sandbox: how shell commands are contained

(defun agentls--true-p (value)
  "Non-nil if the JSON VALUE is true (jsonrpc gives false as :json-false)."
  (and value (not (eq value :json-false))))

(defun agentls--sandbox-refresh (conn &optional then)
  "Ask CONN's server how shell commands are contained (agentls.status).
Keep the answer in CONN; then call THEN, if given, with the sandbox
plist (nil from a server that does not report one) and nil, or with nil
and the error's message."
  (agentls--async conn :workspace/executeCommand
                  (list :command "agentls.status" :arguments (vector (make-hash-table)))
                  (lambda (status)
                    (setf (agentls--sandbox conn) (plist-get status :sandbox))
                    (when then (funcall then (agentls--sandbox conn) nil)))
                  (lambda (err)
                    (if then
                        (funcall then nil (plist-get err :message))
                      (message "agentls: agentls.status failed: %s" (plist-get err :message))))))

(defun agentls--sandbox-line (sandbox)
  "SANDBOX (a plist of agentls.status) in a few words, for the menu."
  (let ((summary (or (plist-get sandbox :summary) "")))
    (if (agentls--true-p (plist-get sandbox :contained))
        ;; "contained (landlock, network off); Landlock only (…)…": the reason is
        ;; for the details.
        (concat "Sandbox: " (car (split-string summary ";")))
      (propertize "Sandbox: NOT contained" 'face 'agentls-error))))

(defun agentls--sandbox-description ()
  "The menu's entry for the sandbox: how this workspace's commands are contained."
  (let* ((conn (agentls--connection t))
         (sandbox (and conn (agentls--sandbox conn))))
    (if sandbox
        (agentls--sandbox-line sandbox)
      "Sandbox: how commands are contained")))

(defun agentls--sandbox-advice (sandbox)
  "What to do about what SANDBOX lacks: a list of lines.
SANDBOX is a plist of agentls.status."
  (let* ((machine (plist-get sandbox :machine))
         (abi (or (plist-get machine :landlockABI) 0))
         (ll-error (plist-get machine :landlockError))
         (ns-error (plist-get machine :userNamespacesError))
         (reason (or (plist-get sandbox :reason) ""))
         (advice nil))
    (cond
     ((string-search "tools.sandbox is false" reason)
      (push "Set tools.sandbox to \"auto\" (or remove it) in your settings to contain commands." advice))
     ((or (and ll-error (string-search "AGENTLS_SANDBOX_MACHINE" ll-error))
          (and ns-error (string-search "AGENTLS_SANDBOX_MACHINE" ns-error)))
      (push "AGENTLS_SANDBOX_MACHINE is set in the server's environment (see `agentls-server-environment'): unset it; it exists to try the fallbacks." advice))
     ((not (member (plist-get machine :os) '(nil "linux")))
      (push (format "agentls contains commands on Linux only; on %s they run as any command you start."
                    (plist-get machine :os))
            advice))
     (t
      (when (eql abi 0)
        (push (format "Landlock is missing (%s): it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK, with landlock in the lsm= boot parameter."
                      (or ll-error "not available"))
              advice))
      (unless (agentls--true-p (plist-get machine :userNamespaces))
        (push (format "Unprivileged user namespaces are missing (%s): allow them with sysctl kernel.unprivileged_userns_clone=1 (Debian), kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu), or a container profile that permits unshare."
                      (or ns-error "not available"))
              advice))))
    (nreverse advice)))

(defun agentls--sandbox-show (sandbox source &optional error)
  "Show SANDBOX (a plist of agentls.status) in the buffer *agentls sandbox*.
SOURCE says where it comes from; ERROR, when SANDBOX is nil, why there
is none."
  (with-help-window "*agentls sandbox*"
    (princ (format "agentls sandbox: how shell commands are contained\n(%s)\n\n" source))
    (if (null sandbox)
        (princ (format "Not known: %s\n" (or error "the server does not report its sandbox (update agentls)")))
      (let* ((contained (agentls--true-p (plist-get sandbox :contained)))
             (level (plist-get sandbox :level))
             (machine (plist-get sandbox :machine))
             (abi (or (plist-get machine :landlockABI) 0))
             (paths (lambda (title key)
                      (let ((list (append (plist-get sandbox key) nil)))
                        (when list
                          (princ (format "\n%s:\n" title))
                          (dolist (p list) (princ (format "  %s\n" (abbreviate-file-name p)))))))))
        (princ (format "Shell commands: %s\n" (plist-get sandbox :summary)))
        (cond ((and contained (equal level "landlock+namespaces"))
               (princ "Writes only in the writable paths, sensitive paths inside the workspace\nread-only, the user's secrets hidden, the network off unless allowed.\n"))
              (contained
               (princ "Landlock alone: writes outside the writable paths are refused, but paths\ninside the workspace are not kept read-only and nothing is hidden; the\nanalysis keeps asking before writes to sensitive paths.\n"))
              (t
               (princ "Commands run with all your rights: only the analysis and your answers\nstand between them and your files.\n")))
        (let ((advice (and (not (equal level "landlock+namespaces")) (agentls--sandbox-advice sandbox))))
          (when advice
            (princ "\nWhat to do:\n")
            (dolist (a advice) (princ (format "  - %s\n" a)))))
        (princ (format "\nThis machine (%s):\n" (or (plist-get machine :os) "?")))
        (princ (format "  Landlock:         %s\n"
                       (if (> abi 0) (format "ABI %d" abi)
                         (format "no (%s)" (or (plist-get machine :landlockError) "not available")))))
        (princ (format "  user namespaces:  %s\n"
                       (if (agentls--true-p (plist-get machine :userNamespaces)) "yes"
                         (format "no (%s)" (or (plist-get machine :userNamespacesError) "not available")))))
        (princ (format "  seccomp:          %s\n" (if (agentls--true-p (plist-get machine :seccomp)) "yes" "no")))
        (princ (format "\nNetwork:   %s\n" (if (agentls--true-p (plist-get sandbox :network)) "on" "off")))
        (princ (format "autoAllow: %s\n" (if (agentls--true-p (plist-get sandbox :autoAllow)) "yes" "no")))
        (funcall paths "Writable" :writable)
        (funcall paths "Read-only inside them" :readOnly)
        (when (equal level "landlock+namespaces")
          (funcall paths "Hidden" :hidden))))))

;;;###autoload
(defun agentls-sandbox ()
  "Show how agentls's shell commands are contained in this workspace.
Asks the running server (agentls.status); without one, the program
itself (`agentls sandbox --json').  The menu `agentls-menu' shows the
same in one line."
  (interactive)
  (let ((conn (agentls--connection t)))
    (if conn
        (let ((source (format "asked of the server for %s" (abbreviate-file-name (agentls--root conn)))))
          (agentls--sandbox-refresh
           conn (lambda (sandbox err) (agentls--sandbox-show sandbox source err))))
      (let* ((program (car agentls-server-program))
             (found (executable-find (if (file-name-absolute-p program) (expand-file-name program) program)))
             (root (agentls--current-root))
             (process-environment (append agentls-server-environment process-environment))
             (source (format "asked of `agentls sandbox' for %s: no server runs there"
                             (abbreviate-file-name root))))
        (unless found
          (user-error "Cannot find the agentls program %S (see `agentls-server-program')" program))
        (with-temp-buffer
          (let ((rc (call-process found nil (list t nil) nil "sandbox" "--json" "--root"
                                  (directory-file-name root))))
            (agentls--sandbox-show
             (and (eql rc 0)
                  (ignore-errors
                    (json-parse-string (buffer-string) :object-type 'plist :null-object nil
                                       :false-object :json-false)))
             source
             (format "`agentls sandbox --json' failed (exit %s)" rc))))))))

;;;###autoload
(defun agentls-run-tool (name args)
  "Run the agent's tool NAME with ARGS yourself, as the agent would.
ARGS is a JSON object as text (interactively) or a plist.  The call
asks, edits and streams as the agent's calls do; its result goes to
the chat."
  (interactive
   (let ((conn (agentls--connection)))
     (list (completing-read "agentls tool: " (agentls--tool-names conn) nil nil)
           (read-string "Arguments (JSON object): " "{}"))))
  (let* ((conn (agentls--connection))
         (args (if (stringp args)
                   (condition-case err
                       (json-parse-string args :object-type 'plist :null-object nil
                                          :false-object :json-false)
                     (json-parse-error (user-error "Not a JSON object: %s"
                                                   (error-message-string err))))
                 args)))
    (unless (and (listp args) (or (null args) (keywordp (car args))))
      (user-error "The arguments must be a JSON object"))
    (agentls--chat-newline conn)
    (agentls--chat-insert conn "## Tool\n\n" 'agentls-heading 'heading)
    (agentls--chat-insert conn (format "%s %s\n\n" name (agentls--json (or args (make-hash-table))))
                          nil 'text)
    (when agentls-display-chat
      (display-buffer (agentls--chat-buffer conn) '(nil (inhibit-same-window . t))))
    (agentls--async
     conn :agentls/runTool (list :name name :args (or args (make-hash-table)))
     (lambda (result)
       (let* ((status (plist-get result :status))
              (failed (not (equal status "success")))
              (text (or (plist-get (plist-get result :error) :message)
                        (plist-get result :display)
                        (plist-get result :output)
                        "")))
         (agentls--chat-insert
          conn (format "_%s%s_\n\n" status
                       (if (plist-get result :summary)
                           (concat ": " (plist-get result :summary))
                         ""))
          (and failed 'agentls-error) 'end)
         (unless (string-empty-p (string-trim text))
           (agentls--chat-insert
            conn (format "```\n%s%s```\n\n"
                         (truncate-string-to-width text 4000 nil nil "\n[…]")
                         (if (string-suffix-p "\n" text) "" "\n"))
            nil 'end))))
     (lambda (err)
       (agentls--chat-insert conn (format "error: %s\n\n" (plist-get err :message))
                             'agentls-error 'end)))))

;;;; Turns: their diff, undo and redo

(defface agentls-turn-file '((t :inherit diff-file-header))
  "Face of a file's name in the header line of a turn diff.")

(defface agentls-turn-by '((t :inherit font-lock-keyword-face))
  "Face of the calls that changed a file, in a turn diff.")

(defface agentls-turn-warning '((t :inherit warning))
  "Face of what a turn diff could not show: commands not recorded, paths left out.")

(defvar-local agentls--turn-info nil
  "In a turn diff buffer: (CONN SESSION TURN).")

(defvar agentls-turn-diff-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "g") #'agentls-turn-diff-refresh)
    (define-key map (kbd "u") #'agentls-undo-turn)
    (define-key map (kbd "U") #'agentls-redo-turn)
    map)
  "Keymap of `agentls-turn-diff-mode'.")

(define-derived-mode agentls-turn-diff-mode diff-mode "agentls-turn"
  "What one prompt of an agentls session changed, as a diff.
Each file is headed by a line naming the calls that changed it:
\"# notes.txt: changed by run_shell_command: sed -i ...\"; RET on a
hunk visits the file (`diff-goto-source').  \\<agentls-turn-diff-mode-map>\\[agentls-undo-turn] undoes the prompt,
\\[agentls-redo-turn] redoes it, \\[agentls-turn-diff-refresh] asks again.

\\{agentls-turn-diff-mode-map}"
  (setq buffer-read-only t))

(defun agentls--turn-target (&optional no-error)
  "The connection and session of this workspace's chat, as (CONN . SESSION).
In a turn diff buffer, that of its diff.  Signal a `user-error' when
there is none, or return nil if NO-ERROR."
  (if agentls--turn-info
      (cons (nth 0 agentls--turn-info) (nth 1 agentls--turn-info))
    (let* ((conn (if (derived-mode-p 'agentls-chat-mode) agentls--chat-conn (agentls--any-connection)))
           (chat (and (agentls--live-p conn) (agentls--chat conn)))
           (session (and (buffer-live-p chat) (buffer-local-value 'agentls--session chat))))
      (cond (session (cons conn session))
            (no-error nil)
            (t (user-error "No chat session yet: ask the agent (`agentls') or resume a session (`agentls-sessions')"))))))

(defun agentls--mark-turn-diff ()
  "Put faces on the \"# \" lines of the turn diff in the current buffer.
Return how many files their headers name."
  (remove-overlays (point-min) (point-max) 'agentls-turn t)
  (let ((files 0))
    (save-excursion
      (goto-char (point-min))
      (while (re-search-forward "^# .*$" nil t)
        (let ((beg (match-beginning 0)) (end (match-end 0)))
          (cl-flet ((mark (b e face)
                      (let ((ov (make-overlay b e)))
                        (overlay-put ov 'agentls-turn t)
                        (overlay-put ov 'face face))))
            (goto-char beg)
            (cond ((looking-at "# \\(.*?\\): \\(changed by .*\\)$")
                   (cl-incf files)
                   (mark (match-beginning 1) (match-end 1) 'agentls-turn-file)
                   (mark (match-beginning 2) (match-end 2) 'agentls-turn-by))
                  ((looking-at "# \\(not recorded\\|left out\\): ")
                   (mark beg end 'agentls-turn-warning)))
            (goto-char end)))))
    files))

(defun agentls--show-turn-diff (conn session result)
  "Show RESULT of agentls.turnDiff for SESSION on CONN; return its buffer."
  (let* ((turn (plist-get result :turn))
         (buf (get-buffer-create (format "*agentls turn %s*" turn)))
         (unrecorded (length (plist-get result :unrecorded))))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (plist-get result :diff))
        (agentls-turn-diff-mode)
        (setq default-directory (agentls--root conn)
              agentls--turn-info (list conn session turn))
        (agentls--mark-turn-diff)
        (setq header-line-format
              (format "agentls · prompt %s%s%s · RET visits · u undo · U redo · g again"
                      turn (if (agentls--true-p (plist-get result :undone)) " (undone)" "")
                      (if (> unrecorded 0)
                          (format " · %d command%s not recorded" unrecorded (if (= unrecorded 1) "" "s"))
                        "")))
        (goto-char (point-min))))
    (pop-to-buffer buf)
    buf))

;;;###autoload
(defun agentls-turn-diff (&optional turn)
  "Show what a prompt of the chat's session changed, as a diff.
The edits of its edit tools and what its shell commands changed,
each file headed by the calls that changed it.  Without TURN (a
numeric prefix argument), the last prompt that changed files."
  (interactive (list (and current-prefix-arg (prefix-numeric-value current-prefix-arg))))
  (let* ((target (agentls--turn-target))
         (conn (car target)) (session (cdr target)))
    (agentls--async
     conn :workspace/executeCommand
     (list :command "agentls.turnDiff"
           :arguments (vector (append (list :session session) (and turn (list :turn turn)))))
     (lambda (result)
       (if (string-empty-p (or (plist-get result :diff) ""))
           (message "agentls: that prompt changed no file")
         (agentls--show-turn-diff conn session result)))
     (lambda (err)
       (message "agentls: the turn diff failed: %s" (plist-get err :message))))))

(defun agentls-turn-diff-refresh ()
  "Ask again for the turn diff of this buffer."
  (interactive)
  (let ((turn (nth 2 agentls--turn-info)))
    (agentls-turn-diff turn)))

(defun agentls--turn-notes (result)
  "What the undo or redo RESULT left as it was or could not know, as strings."
  (let ((not-restorable (append (plist-get result :notRestorable) nil))
        (unrecorded (append (plist-get result :unrecorded) nil))
        (left-out (or (plist-get result :leftOut) 0)))
    (delq nil
          (list (and not-restorable
                     (concat "not restorable (left as they are): " (string-join not-restorable ", ")))
                (and unrecorded
                     (concat "not recorded, so not taken back: " (string-join unrecorded ", ")))
                (and (> left-out 0)
                     (format "%d ignored path%s left out" left-out (if (= left-out 1) "" "s")))))))

(defun agentls--file-names (files)
  "FILES (a vector of absolute paths) as one string of short names."
  (mapconcat (lambda (f) (file-relative-name f)) files ", "))

(defvar agentls-after-turn-back-hook nil
  "Hook run with the result (a plist) after an undo or redo of a prompt.")

(defun agentls--turn-back (redo force turn &optional target)
  "Undo (or REDO) prompt TURN of the chat's session.
FORCE undoes (or redoes) the files not changed since, where others
were.  TARGET is (CONN . SESSION), by default the chat's."
  (let* ((target (or target (agentls--turn-target)))
         (conn (car target)) (session (cdr target))
         (verb (if redo "redo" "undo")))
    (agentls--async
     conn :workspace/executeCommand
     (list :command (if redo "agentls.redoTurn" "agentls.undoTurn")
           :arguments (vector (append (list :session session)
                                      (and turn (list :turn turn))
                                      (and force (list :force t)))))
     (lambda (result)
       (let ((changed (plist-get result :changed))
             (reverted (plist-get result :reverted))
             (deleted (plist-get result :deleted))
             (n (plist-get result :turn)))
         (if (and (> (length changed) 0) (zerop (length reverted)) (zerop (length deleted)) (not force))
             ;; Asked outside the process filter.
             (run-at-time
              0 nil
              (lambda ()
                (if (y-or-n-p (format "Changed since %s %s, so nothing was %s: %s.  %s the other files anyway? "
                                      (if redo "the undo of prompt" "prompt") n
                                      (if redo "redone" "undone")
                                      (agentls--file-names changed)
                                      (if redo "Redo" "Undo")))
                    (agentls--turn-back redo t n target)
                  (message "agentls: nothing was %s" (if redo "redone" "undone")))))
           (let ((notes (agentls--turn-notes result)))
             (when (> (length changed) 0)
               (push (concat "left as they are (changed since): " (agentls--file-names changed)) notes))
             (message "agentls: %s prompt %s: %d file%s %s, %d deleted%s"
                      (if redo "redid" "undid") n
                      (length reverted) (if (= (length reverted) 1) "" "s")
                      (if redo "brought back" "reverted")
                      (length deleted)
                      (if notes (concat "; " (string-join notes "; ")) ""))
             (run-hook-with-args 'agentls-after-turn-back-hook result)))))
     (lambda (err)
       (message "agentls: %s failed: %s" verb (plist-get err :message))))))

;;;###autoload
(defun agentls-undo-turn (&optional force)
  "Take back what the chat session's last prompt changed.
Its edits and its shell commands' changes: text files in one undo
step per buffer, created files deleted, removed files, binary files,
folders and modes restored on disk.  Where a file changed since,
nothing is undone and you are asked whether to undo the others; with
prefix argument FORCE, they are undone without asking.  In a turn
diff buffer, its prompt."
  (interactive "P")
  (agentls--turn-back nil force (nth 2 agentls--turn-info)))

;;;###autoload
(defun agentls-redo-turn (&optional force)
  "Bring back what `agentls-undo-turn' took back, the prompt undone last.
As the undo does; where a file changed since the undo, you are asked,
or with prefix argument FORCE not.  A redone prompt can be undone again.
In a turn diff buffer, its prompt."
  (interactive "P")
  (agentls--turn-back t force (nth 2 agentls--turn-info)))

;;;###autoload (autoload 'agentls-menu "agentls" nil t)
(transient-define-prefix agentls-menu ()
  "The commands of agentls."
  [["Ask"
    ("a" "Ask (region as context)" agentls)
    ("c" "Compose a longer prompt" agentls-compose)
    ("f" "Fix the diagnostic at point" agentls-fix-diagnostic-at-point)
    ("x" "Run a tool yourself" agentls-run-tool)
    ("k" "Cancel" agentls-cancel)]
   ["Session"
    ("v" "Chat" agentls-chat)
    ("s" "Resume a session" agentls-sessions)
    ("n" "New session" agentls-new-session)
    ("p" "What waits for me" agentls-show-pending)
    ("o" "Shell output" agentls-show-shell-output)]
   ["Turn"
    ("D" "What the last prompt changed" agentls-turn-diff)
    ("u" "Undo the last prompt" agentls-undo-turn)
    ("U" "Redo what was undone" agentls-redo-turn)]
   ["Settings"
    ("m" "Approval mode" agentls-set-approval-mode)
    ("t" "Trust this folder" agentls-trust)
    ("b" agentls-sandbox :description agentls--sandbox-description)
    ("d" "Doctor" agentls-doctor)
    ("r" "Restart the server" agentls-restart)]])

(provide 'agentls)
;;; agentls.el ends here
