;;; agentls-eglot-test.el --- agentls driven by stock eglot in batch Emacs  -*- lexical-binding: t -*-

;; agentls as any eglot user would run it: registered in `eglot-server-programs', started
;; with `eglot', tools run through `eglot-execute-command'.  There is no agentls-specific
;; client code here, only the checks.  Run one case per Emacs process (test/emacs/run.sh):
;;
;;   AGENTLS_BIN=/path/to/agentls emacs --batch -l agentls-eglot-test.el -f agentls-test-main CASE
;;
;; Answers to eglot's own prompts (y-or-n-p) are read from stdin, as batch Emacs does.
;; The case prints "PASS CASE" and exits 0, or prints "FAIL CASE: why" with the server's
;; stderr and the tail of eglot's events buffer, and exits 1.

(require 'cl-lib)
(require 'eglot)
(require 'subr-x)

(defvar agentls-test-bin (getenv "AGENTLS_BIN")
  "The agentls binary under test.")

(defconst agentls-test-original
  "alpha\nbeta\ngamma one\ndelta\ngamma two\nepsilon\n"
  "The visited file's text before any tool runs.")

(defvar agentls-test--server nil "The eglot server of the running case.")

;; A server that exits when told to must stay down.
(setq eglot-autoreconnect nil)
(defvar agentls-test--root nil "The temporary workspace of the running case.")

;;; Helpers

(defun agentls-test--fail (fmt &rest args)
  "Fail the running case with a message made from FMT and ARGS."
  (signal 'agentls-test-failure (list (apply #'format fmt args))))

(define-error 'agentls-test-failure "agentls test failure")

(defun agentls-test--equal (what got want)
  "Fail unless GOT equals WANT; WHAT names the value."
  (unless (equal got want)
    (agentls-test--fail "%s:\n  got  %S\n  want %S" what got want)))

(defun agentls-test--wait (pred what &optional secs)
  "Process events until PRED is non-nil; fail after SECS (default 15) naming WHAT."
  (let ((deadline (+ (float-time) (or secs 15))))
    (while (not (funcall pred))
      (when (> (float-time) deadline)
        (agentls-test--fail "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun agentls-test--disk (file)
  "FILE's content on disk."
  (with-temp-buffer
    (insert-file-contents file)
    (buffer-string)))

(defun agentls-test--text ()
  "The current buffer's whole text."
  (buffer-substring-no-properties (point-min) (point-max)))

(defun agentls-test--flush ()
  "Send the buffer's pending changes to the server.
eglot sends them from an idle timer, and batch Emacs is never idle,
so call what that timer calls."
  (eglot--signal-textDocument/didChange))

(defun agentls-test--command (command &rest args)
  "Run workspace/executeCommand COMMAND with one argument object.
ARGS is the object, as a plist."
  (eglot-execute-command agentls-test--server command (vector args)))

(defun agentls-test--run-tool (name &rest args)
  "Run tool NAME with ARGS (a plist) through agentls.runTool.
Return the ToolResult as a plist."
  (agentls-test--flush)
  (agentls-test--command "agentls.runTool" :name name :args args))

(defun agentls-test--expect-success (result what)
  "Fail unless the ToolResult RESULT succeeded; WHAT names the call."
  (unless (equal (plist-get result :status) "success")
    (agentls-test--fail "%s: want status success, got %S" what result)))

(defun agentls-test--read-back (want what)
  "Fail unless read_file of the visited file returns WANT; WHAT says when."
  (let* ((res (agentls-test--run-tool "read_file" :file_path "notes.txt"))
         (out (plist-get res :output)))
    (agentls-test--expect-success res (format "read_file %s" what))
    (unless (and (stringp out) (string-search (string-trim-right want) out))
      (agentls-test--fail "read_file %s: the server's view differs from the buffer:\n--- server ---\n%s\n--- buffer ---\n%s"
                          what out want))))

(defun agentls-test--start (init-options)
  "Visit notes.txt in a fresh workspace and start eglot on it with agentls.
INIT-OPTIONS, when non-nil, is sent as initializationOptions.
Return the buffer."
  (unless (and agentls-test-bin (file-executable-p agentls-test-bin))
    (agentls-test--fail "AGENTLS_BIN is not an executable: %S" agentls-test-bin))
  (setq agentls-test--root (file-name-as-directory (make-temp-file "agentls-eglot-" t)))
  (let ((file (expand-file-name "notes.txt" agentls-test--root)))
    (with-temp-file file (insert agentls-test-original))
    (setq eglot-server-programs
          `((text-mode . (,agentls-test-bin "serve"
                          ,@(when init-options (list :initializationOptions init-options))))))
    (with-current-buffer (find-file-noselect file)
      (unless (derived-mode-p 'text-mode) (text-mode))
      (apply #'eglot (eglot--guess-contact))
      (agentls-test--wait (lambda () (and (eglot-current-server) (eglot-managed-p)))
                          "eglot to connect and manage the buffer")
      (setq agentls-test--server (eglot-current-server))
      (let ((info (eglot--server-info agentls-test--server)))
        (agentls-test--equal "serverInfo.name" (plist-get info :name) "agentls"))
      (unless (seq-contains-p (eglot--server-capable :executeCommandProvider :commands)
                              "agentls.runTool")
        (agentls-test--fail "executeCommandProvider lacks agentls.runTool: %S"
                            (eglot--server-capable :executeCommandProvider)))
      (current-buffer))))

(defun agentls-test--stop ()
  "Send shutdown, then exit, and check that the server exits with status 0.
`eglot-shutdown' kills the process right after sending exit, which would
hide the server's own exit status, so the two messages are sent here."
  (when (and agentls-test--server (jsonrpc-running-p agentls-test--server))
    (let ((proc (jsonrpc--process agentls-test--server)))
      (agentls-test--equal "shutdown result" (jsonrpc-request agentls-test--server :shutdown nil) nil)
      (jsonrpc-notify agentls-test--server :exit nil)
      (agentls-test--wait (lambda () (not (process-live-p proc))) "agentls to exit after exit" 5)
      (agentls-test--equal "agentls exit status after shutdown and exit" (process-exit-status proc) 0))))

(defun agentls-test--diagnostics ()
  "The tail of every eglot buffer: the server's stderr and the events."
  (mapconcat
   (lambda (buf)
     (with-current-buffer buf
       (format "--- %s ---\n%s\n" (buffer-name)
               (buffer-substring-no-properties (max (point-min) (- (point-max) 6000))
                                               (point-max)))))
   (seq-filter (lambda (b) (string-match-p "\\`\\*EGLOT" (buffer-name b))) (buffer-list))
   ""))

;;; Cases

(defun agentls-test-case-edit-undo ()
  "auto_edit from initializationOptions; two tool calls, each undone by one `undo'."
  (setq eglot-confirm-server-initiated-edits nil)
  (with-current-buffer (agentls-test--start '(:approvalMode "auto_edit"))
    (let ((file buffer-file-name)
          (after1 (string-replace "beta" "BETA (first call)" agentls-test-original))
          after2)
      (setq after2 (string-replace "gamma" "GAMMA" after1))
      ;; The command loop puts a boundary after every command; batch Emacs has no
      ;; command loop, so the boundaries a user's keystrokes would make are made here.
      (undo-boundary)
      (let ((res (agentls-test--run-tool "replace" :file_path "notes.txt"
                                         :old_string "beta" :new_string "BETA (first call)")))
        (agentls-test--expect-success res "replace beta")
        (agentls-test--equal "buffer after the first replace" (agentls-test--text) after1))
      (undo-boundary)
      ;; One call that changes two places: still one undo step.
      (let ((res (agentls-test--run-tool "replace" :file_path "notes.txt"
                                         :old_string "gamma" :new_string "GAMMA"
                                         :allow_multiple t)))
        (agentls-test--expect-success res "replace gamma (allow_multiple)")
        (agentls-test--equal "buffer after the second replace" (agentls-test--text) after2))
      (agentls-test--equal "file on disk (the edit lives in the buffer)" (agentls-test--disk file)
                           agentls-test-original)
      (agentls-test--read-back after2 "after both edits")

      (undo-boundary)
      (undo)
      (agentls-test--equal "buffer after one undo (reverts the second call only)"
                           (agentls-test--text) after1)
      (undo-boundary)
      (setq last-command 'undo)         ; a second undo in a row, as typed
      (undo)
      (agentls-test--equal "buffer after the second undo" (agentls-test--text) agentls-test-original)
      (when (buffer-modified-p)
        (agentls-test--fail "the buffer is still marked modified after undoing every edit"))
      (agentls-test--read-back agentls-test-original "after undo")
      (agentls-test--equal "file on disk at the end" (agentls-test--disk file) agentls-test-original)
      (agentls-test--stop))))

(defvar agentls-test--questions 0 "How many y-or-n-p questions were asked.")

(defun agentls-test--count-questions ()
  "Count eglot's y-or-n-p questions from now on in `agentls-test--questions'."
  (setq agentls-test--questions 0)
  (advice-add 'y-or-n-p :before (lambda (&rest _) (cl-incf agentls-test--questions))
              '((name . agentls-test-count))))

(defun agentls-test--eglot-tells-refusals-p ()
  "Non-nil if this eglot answers a refused workspace/applyEdit as not applied.
eglot 1.9 does (an error reply).  eglot 1.17 (Emacs 30's own) answers
applied: true even when its user said no; the test tells them apart by
`eglot-confirm-server-edits', the option's name from eglot 1.16."
  (not (boundp 'eglot-confirm-server-edits)))

(defun agentls-test-case-setmode-confirm ()
  "yolo through agentls.setApprovalMode.
eglot's own confirmation of the edit, turned on (eglot 1.17 does not
ask for an edit of a visited file by default), is answered y on stdin."
  (setq eglot-confirm-server-initiated-edits t)
  (agentls-test--count-questions)
  (with-current-buffer (agentls-test--start nil)
    (let ((want (string-replace "delta" "DELTA" agentls-test-original)))
      (agentls-test--equal "agentls.setApprovalMode result"
                           (agentls-test--command "agentls.setApprovalMode" :mode "yolo") nil)
      (undo-boundary)
      (let ((res (agentls-test--run-tool "replace" :file_path (expand-file-name "notes.txt" agentls-test--root)
                                         :old_string "delta" :new_string "DELTA")))
        (agentls-test--expect-success res "replace delta")
        (agentls-test--equal "questions eglot asked" agentls-test--questions 1)
        (agentls-test--equal "buffer after the replace" (agentls-test--text) want))
      (agentls-test--read-back want "after the edit")
      (undo-boundary)
      (undo)
      (agentls-test--equal "buffer after undo" (agentls-test--text) agentls-test-original)
      (agentls-test--read-back agentls-test-original "after undo")
      (agentls-test--stop))))

(defun agentls-test-case-eglot-refuses ()
  "eglot's user answers n to the edit: nothing changes in Emacs.
eglot 1.9 tells the server, so the tool call fails and the server's
view stays the buffer's.  eglot 1.17 answers applied: true to an edit
its user refused, so the call reports success and the server's view
holds the edit the buffer lacks: with it, eglot's own confirmation must
stay off (agentls asks first; see editors/emacs)."
  (setq eglot-confirm-server-initiated-edits t)
  (agentls-test--count-questions)
  (with-current-buffer (agentls-test--start '(:approvalMode "yolo"))
    (let* ((file buffer-file-name)
           (res (agentls-test--run-tool "replace" :file_path "notes.txt"
                                        :old_string "epsilon" :new_string "EPSILON")))
      (agentls-test--equal "questions eglot asked" agentls-test--questions 1)
      (agentls-test--equal "buffer after the refused edit" (agentls-test--text) agentls-test-original)
      (agentls-test--equal "file on disk after the refused edit" (agentls-test--disk file) agentls-test-original)
      (if (agentls-test--eglot-tells-refusals-p)
          (progn
            (when (equal (plist-get res :status) "success")
              (agentls-test--fail "a refused applyEdit reported success: %S" res))
            (unless (plist-get res :error)
              (agentls-test--fail "the failed call carries no error: %S" res))
            (agentls-test--read-back agentls-test-original "after the refused edit"))
        ;; What eglot 1.17 makes of it: the server was told the edit landed.
        (agentls-test--expect-success res "replace refused in eglot 1.17 (told applied)")
        (agentls-test--read-back (string-replace "epsilon" "EPSILON" agentls-test-original)
                                 "after an edit refused in eglot but answered as applied"))
      (agentls-test--stop))))

(defun agentls-test-case-back-to-back ()
  "Tool calls in a row while Emacs is busy, as during one long request.
eglot reports buffer changes from an idle timer, so while a command (or,
later, an agentls.prompt request) runs, the server hears nothing of the
edits it made.  Later tools must still read the edited text, and the
next edit of the same file must land."
  (setq eglot-confirm-server-initiated-edits nil)
  (with-current-buffer (agentls-test--start '(:approvalMode "auto_edit"))
    (let* ((after1 (string-replace "alpha" "ALPHA" agentls-test-original))
           (after2 (string-replace "epsilon" "EPSILON" after1))
           (run (lambda (name &rest args)
                  ;; No flush: nothing gives eglot's idle timer a chance.
                  (agentls-test--command "agentls.runTool" :name name :args args))))
      (agentls-test--expect-success
       (funcall run "replace" :file_path "notes.txt" :old_string "alpha" :new_string "ALPHA")
       "replace alpha")
      (agentls-test--equal "buffer after the first replace" (agentls-test--text) after1)
      (let* ((res (funcall run "read_file" :file_path "notes.txt"))
             (out (plist-get res :output)))
        (unless (and (stringp out) (string-search "ALPHA" out))
          (agentls-test--fail "read_file right after the edit does not see it: %S" res)))
      (agentls-test--expect-success
       (funcall run "replace" :file_path "notes.txt" :old_string "epsilon" :new_string "EPSILON")
       "a second replace of the same file before eglot reported the first")
      (agentls-test--equal "buffer after the second replace" (agentls-test--text) after2)
      (agentls-test--flush)
      (agentls-test--read-back after2 "once eglot reported its changes")
      (agentls-test--stop))))

(defun agentls-test-case-shell-progress ()
  "A shell command's live output, as each eglot shows it.
eglot 1.17 (Emacs 30's own) declares window.workDoneProgress and
shows $/progress in its mode line: the command's lines appear there
while it runs.  eglot 1.9 (Debian's for
Emacs 28) declares no progress support, so agentls sends the output as
window/logMessage, which eglot keeps in its events buffer only."
  (with-current-buffer (agentls-test--start '(:approvalMode "yolo"))
    (let* ((progress-p (fboundp 'eglot--progress-reporters))
           (seen nil)
           (sample (lambda ()
                     (when (and progress-p (jsonrpc-running-p agentls-test--server))
                       (maphash (lambda (_token pr)
                                  ;; The mode line's reporter: (eglot--mode-line-reporter TOKEN TITLE MESSAGE PERCENT).
                                  (when (eq (car pr) 'eglot--mode-line-reporter)
                                    (cl-pushnew (list (nth 2 pr) (nth 3 pr)) seen :test #'equal)))
                                (eglot--progress-reporters agentls-test--server)))))
           (timer (run-at-time 0 0.05 sample))
           res)
      (unwind-protect
          ;; runTool through eglot-execute-command, which waits: the samples are taken
          ;; from a timer meanwhile, as the mode line would be redrawn.
          (setq res (agentls-test--run-tool
                     "run_shell_command"
                     :command "for i in 1 2 3 4 5; do echo progress-line-$i; sleep 0.3; done"))
        (cancel-timer timer))
      (agentls-test--expect-success res "run_shell_command")
      (dolist (i '(1 2 3 4 5))
        (unless (string-search (format "progress-line-%d" i) (plist-get res :output))
          (agentls-test--fail "the result lacks progress-line-%d: %S" i res)))
      (if progress-p
          (progn
            (unless seen
              (agentls-test--fail "eglot showed no progress while the command ran"))
            (unless (cl-some (lambda (s) (and (stringp (cadr s))
                                              (string-match-p "progress-line-[1-4]" (cadr s))))
                             seen)
              (agentls-test--fail "no output line in eglot's progress while the command ran: %S"
                                  (reverse seen))))
        (let ((events (with-current-buffer (jsonrpc-events-buffer agentls-test--server)
                        (buffer-substring-no-properties (point-min) (point-max)))))
          (when (string-search "$/progress" events)
            (agentls-test--fail "agentls sent $/progress to an eglot that did not ask for it"))
          (unless (and (string-search "window/logMessage" events)
                       (string-search "progress-line-3" events))
            (agentls-test--fail "the output is not in eglot's events buffer as window/logMessage"))))
      (agentls-test--stop))))

(defun agentls-test-case-list-tools ()
  "agentls.listTools through eglot-execute-command."
  (with-current-buffer (agentls-test--start nil)
    (let* ((infos (agentls-test--command "agentls.listTools"))
           (names (mapcar (lambda (i) (plist-get i :name)) infos)))
      (dolist (n '("read_file" "replace" "write_file" "run_shell_command" "grep_search"))
        (unless (member n names)
          (agentls-test--fail "agentls.listTools lacks %s: %S" n names)))
      (agentls-test--stop))))

;;; Entry point

(defun agentls-test-main ()
  "Run the case named by the first command-line argument and exit with its status."
  (let* ((name (pop command-line-args-left))
         (fn (and name (intern-soft (format "agentls-test-case-%s" name)))))
    (unless (fboundp fn)
      (message "FAIL %s: no such case" name)
      (kill-emacs 2))
    (condition-case err
        (progn
          (funcall fn)
          (message "\nPASS %s" name)
          (kill-emacs 0))
      (error
       (message "\nFAIL %s: %s\n%s" name
                (if (eq (car err) 'agentls-test-failure) (cadr err) (error-message-string err))
                (agentls-test--diagnostics))
       (ignore-errors (when agentls-test--server (jsonrpc-shutdown agentls-test--server)))
       (kill-emacs 1)))))

;;; agentls-eglot-test.el ends here
