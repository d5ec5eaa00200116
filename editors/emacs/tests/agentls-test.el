;;; agentls-test.el --- ERT tests of agentls.el against the real server  -*- lexical-binding: t; -*-

;;; Commentary:

;; Batch Emacs drives agentls.el against the real agentls binary
;; (AGENTLS_BIN), whose model is the fake Gemini server
;; (internal/fakegemini/cmd/fakegemini, FAKEGEMINI_BIN) replaying a
;; script.  The checks are on what a user sees: the chat buffer, the
;; diff buffer, the file's buffer and the file on disk, the shell output
;; buffer, Flymake's diagnostics, the mode line.  Run through run.sh,
;; one Emacs process per test:
;;
;;   emacs --batch -Q -L editors/emacs -l agentls-test.el \
;;     --eval '(ert-run-tests-batch-and-exit (quote agentls-test-prompt-streams))'

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'agentls)

(defvar agentls-test-bin (getenv "AGENTLS_BIN") "The agentls binary under test.")
(defvar agentls-test-fake (getenv "FAKEGEMINI_BIN") "The fake Gemini server binary.")
(defvar agentls-test--processes nil "Processes a test started.")
(defvar agentls-test--root nil "The workspace of the running test.")
(defvar agentls-test--server-args nil "More arguments of agentls serve.")

;; Batch Emacs has no windows worth selecting; nothing may ask on stdin
;; unless a test says so.
(setq agentls-events-buffer-size nil)

;; AGENTLS_TEST_INCREMENTAL=1: every buffer sends its changes, not its text.
(when (equal (getenv "AGENTLS_TEST_INCREMENTAL") "1")
  (setq agentls-incremental-sync-size 0))

;;;; Helpers

(defun agentls-test--wait (pred what &optional secs)
  "Process events until PRED returns non-nil; fail after SECS (default 20) naming WHAT.
Return PRED's value."
  (let ((deadline (+ (float-time) (or secs 20)))
        value)
    (while (not (setq value (funcall pred)))
      (when (> (float-time) deadline)
        (ert-fail (list (format "timed out waiting for %s" what)
                        :chat (agentls-test--chat-text)
                        :stderr (agentls-test--stderr))))
      (accept-process-output nil 0.02))
    value))

(defun agentls-test--workspace (files)
  "Make a workspace holding FILES, an alist of (NAME . TEXT); return its root."
  (let ((root (file-name-as-directory (file-truename (make-temp-file "agentls-el-" t)))))
    (make-directory (expand-file-name ".git" root))
    (dolist (f files)
      (let ((path (expand-file-name (car f) root)))
        (make-directory (file-name-directory path) t)
        (with-temp-file path (insert (cdr f)))))
    (setq agentls-test--root root)))

(defun agentls-test--disk (file)
  "The text of FILE on disk."
  (with-temp-buffer
    (insert-file-contents file)
    (buffer-string)))

(defun agentls-test--fake-gemini (script &optional requests)
  "Start the fake Gemini server with SCRIPT (a plist); return its URL.
With REQUESTS, a file, the server appends each request it gets there."
  (unless (and agentls-test-fake (file-executable-p agentls-test-fake))
    (ert-fail (format "FAKEGEMINI_BIN is not an executable: %S" agentls-test-fake)))
  (let* ((file (make-temp-file "agentls-script-" nil ".json"
                               (json-serialize script)))
         (out "")
         (proc (make-process :name "fakegemini"
                             :command (append (list agentls-test-fake "-script" file "-addr" "127.0.0.1:0")
                                              (and requests (list "-requests" requests)))
                             :connection-type 'pipe
                             :noquery t
                             :stderr (get-buffer-create "*fakegemini stderr*")
                             :filter (lambda (_ s) (setq out (concat out s))))))
    (push proc agentls-test--processes)
    (agentls-test--wait (lambda () (string-match-p "\n" out)) "the fake Gemini server's URL" 10)
    (string-trim (car (split-string out "\n")))))

(defun agentls-test--start (root rel url &optional init-options env)
  "Visit REL in ROOT with agentls started against the model at URL.
INIT-OPTIONS are the server's initialization options; ENV is more of its
environment.  Return the buffer."
  (unless (and agentls-test-bin (file-executable-p agentls-test-bin))
    (ert-fail (format "AGENTLS_BIN is not an executable: %S" agentls-test-bin)))
  (setq agentls-server-program (append (list agentls-test-bin "serve") agentls-test--server-args)
        agentls-server-environment (append (list "GEMINI_API_KEY=test-key"
                                                 (concat "GOOGLE_GEMINI_BASE_URL=" (or url "http://127.0.0.1:9")))
                                           env)
        agentls-initialization-options init-options)
  (let ((buf (find-file-noselect (expand-file-name rel root))))
    (set-buffer buf)
    (switch-to-buffer buf)
    (let ((conn (agentls--connection)))
      (agentls-test--wait (lambda () (and (agentls--ready conn)
                                          (buffer-local-value 'agentls--conn buf)))
                          "agentls to start and open the buffer")
      (should (equal (plist-get (agentls--server-info conn) :name) "agentls")))
    buf))

(defun agentls-test--conn ()
  "The running connection."
  (cl-loop for c being the hash-values of agentls--connections
           when (agentls--live-p c) return c))

(defun agentls-test--chat-text ()
  "The chat's text, or nil."
  (let ((conn (agentls-test--conn)))
    (when (and conn (buffer-live-p (agentls--chat conn)))
      (with-current-buffer (agentls--chat conn)
        (buffer-substring-no-properties (point-min) (point-max))))))

(defun agentls-test--stderr ()
  "The tail of the server's stderr and events buffers."
  (mapconcat (lambda (b)
               (with-current-buffer b
                 (format "--- %s ---\n%s\n" (buffer-name)
                         (buffer-substring-no-properties
                          (max (point-min) (- (point-max) 3000)) (point-max)))))
             (cl-remove-if-not (lambda (b) (string-match-p "agentls.*\\(stderr\\|events\\)"
                                                           (buffer-name b)))
                               (buffer-list))
             ""))

(defun agentls-test--wait-chat (needle what &optional secs)
  "Wait until the chat contains NEEDLE; WHAT says what it is."
  (agentls-test--wait (lambda () (let ((text (agentls-test--chat-text)))
                                   (and text (string-search needle text))))
                      (format "%s (%S) in the chat" what needle) secs))

(defun agentls-test--count (needle text)
  "How many times NEEDLE occurs in TEXT."
  (let ((n 0) (start 0))
    (while (setq start (string-search needle text start))
      (cl-incf n)
      (cl-incf start))
    n))

(defun agentls-test--diff-buffer ()
  "Wait for a pending edit's diff buffer and return it."
  (agentls-test--wait
   (lambda () (cl-find-if (lambda (b) (with-current-buffer b
                                        (and (derived-mode-p 'agentls-diff-mode)
                                             agentls--entry
                                             (not (agentls--confirmation-done agentls--entry)))))
                          (buffer-list)))
   "the diff buffer of a proposed edit"))

(defun agentls-test--cleanup ()
  "Stop the server and the processes of the test."
  (let ((conn (agentls-test--conn)))
    (when conn
      (agentls-shutdown conn)
      (should-not (process-live-p (jsonrpc--process conn)))
      (should (equal (process-exit-status (jsonrpc--process conn)) 0))))
  (dolist (p agentls-test--processes)
    (when (process-live-p p) (delete-process p)))
  (setq agentls-test--processes nil))

(defmacro agentls-test--with (&rest body)
  "Run BODY, then stop what it started."
  (declare (indent 0) (debug t))
  `(unwind-protect (progn ,@body)
     (agentls-test--cleanup)))

(defun agentls-test--text (buf)
  "BUF's whole text."
  (with-current-buffer buf (buffer-substring-no-properties (point-min) (point-max))))

(defun agentls-test--busy (secs)
  "Keep Emacs busy for SECS without reading process output.
As redisplay or a loaded machine would: the server's messages pile up
and arrive in one read."
  (let ((end (+ (float-time) secs)))
    (while (< (float-time) end))))

(defun agentls-test--notes (buf)
  "The texts of agentls's Flymake diagnostics in BUF."
  (with-current-buffer buf
    (mapcar #'flymake-diagnostic-text
            (cl-remove-if-not (lambda (d) (eq (flymake-diagnostic-backend d) 'agentls-flymake-backend))
                              (flymake-diagnostics)))))

;;;; Tests

(ert-deftest agentls-test-package-loads ()
  "The package defines its commands and modes without starting anything."
  (dolist (f '(agentls agentls-cancel agentls-sessions agentls-set-approval-mode
                       agentls-chat agentls-new-session agentls-diff-accept
                       agentls-diff-reject agentls-diff-edit agentls-diff-ediff))
    (should (commandp f)))
  ;; Every command of the menu exists.
  (should (commandp 'agentls-menu))
  (let (suffixes)
    ;; (Private functions, such as a description's, are no commands.)
    (cl-labels ((walk (x) (cond ((and (symbolp x) (string-prefix-p "agentls" (symbol-name x))
                                      (not (string-search "--" (symbol-name x))))
                                 (push x suffixes))
                                ((consp x) (walk (car x)) (walk (cdr x)))
                                ((vectorp x) (mapc #'walk x)))))
      (walk (get 'agentls-menu 'transient--layout)))
    (should (> (length suffixes) 10))
    (dolist (f suffixes) (should (commandp f))))
  (should (= 0 (hash-table-count agentls--connections)))
  (should-not (process-list))
  ;; A missing program is a clear error, and leaves nothing behind.
  (let ((agentls-server-program '("/nonexistent/agentls" "serve"))
        (default-directory (agentls-test--workspace '(("a.txt" . "a\n")))))
    (should (string-search "Cannot find the agentls program"
                           (cadr (should-error (agentls "hello") :type 'user-error))))
    (should-not (cl-some #'agentls--live-p (hash-table-values agentls--connections)))
    (should-not (process-list))))

(ert-deftest agentls-test-outside-project ()
  "Outside a project the user chooses the workspace, once."
  (agentls-test--with
    (let* ((root (file-name-as-directory (file-truename (make-temp-file "agentls-noproj-" t))))
           (file (expand-file-name "notes.txt" root))
           (url (agentls-test--fake-gemini '(:turns [(:text "One.") (:text "Two.")])))
           (asked 0))
      (with-temp-file file (insert "n\n"))
      (setq agentls-server-program (append (list agentls-test-bin "serve") agentls-test--server-args)
            agentls-server-environment (list "GEMINI_API_KEY=test-key" (concat "GOOGLE_GEMINI_BASE_URL=" url)))
      (set-buffer (find-file-noselect file))
      (should-not (agentls--project-root))
      (cl-letf (((symbol-function 'read-directory-name)
                 (lambda (&rest _) (cl-incf asked) root)))
        (agentls "first")
        (agentls-test--wait-chat "_turn ended: end_turn" "the first answer")
        (agentls-test--wait (lambda () (not (buffer-local-value 'agentls--busy (agentls--chat (agentls-test--conn)))))
                            "the first prompt to end")
        (agentls "second")
        (agentls-test--wait (lambda () (= 2 (agentls-test--count "_turn ended: end_turn" (agentls-test--chat-text))))
                            "the second answer"))
      (should (= asked 1))
      (should (equal (agentls--root (agentls-test--conn)) root)))))

(ert-deftest agentls-test-prompt-streams ()
  "M-x agentls with a region: the answer streams into the chat and the turn ends."
  (agentls-test--with
    (let* ((url (agentls-test--fake-gemini
                 '(:turns [(:thought "The user wants a greeting."
                                     :text "Hello from the fake model.\nSecond line of the answer."
                                     :chunks 5
                                     :usage (:inputTokens 321 :outputTokens 12))])))
           (root (agentls-test--workspace '(("a.txt" . "alpha\nbeta\ngamma\n"))))
           (buf (agentls-test--start root "a.txt" url)))
      (with-current-buffer buf
        (transient-mark-mode 1)
        (goto-char (point-min))
        (set-mark (point))
        (forward-line 2)
        (activate-mark)
        (agentls "explain this"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (let ((text (agentls-test--chat-text))
            (chat (agentls--chat (agentls-test--conn))))
        (should (string-search "## You\n\nexplain this\n\n_context: a.txt:1-2_" text))
        (should (string-search "Hello from the fake model.\nSecond line of the answer." text))
        (should (string-search "## agentls\n\nThe user wants a greeting.\n\nHello from the fake model." text))
        (should (string-search "tokens: 321 in, 12 out" text))
        (agentls-doctor)
        (let ((doc (agentls-test--text "*agentls doctor*")))
          (should (string-search (concat "-> " agentls-test-bin " (agentls ") doc))
          (should (string-search ":name \"agentls\"" doc))
          (should (string-search "open documents: 1" doc)))
        (with-current-buffer chat
          (should (derived-mode-p 'agentls-chat-mode))
          ;; Markdown faces when markdown-mode is installed (run.sh runs this
          ;; test with and without it), plain text otherwise.
          (if (locate-library "markdown-mode")
              (should (derived-mode-p 'markdown-mode))
            (should (derived-mode-p 'text-mode)))
          (should (stringp agentls--session))
          (should-not agentls--busy))))))

(ert-deftest agentls-test-read-location ()
  "A read shows in the chat with its status and a location that visits the file."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("src/greek.txt" . "alpha\nbeta\ngamma\n")
                                            ("other.txt" . "x\n"))))
           (path (expand-file-name "src/greek.txt" root))
           (url (agentls-test--fake-gemini
                 `(:turns [(:text "Let me read it." :calls [(:name "read_file" :args (:file_path ,path))])
                           (:text "It has three lines.")])))
           (_ (agentls-test--start root "other.txt" url)))
      (agentls "how many lines in greek.txt?")
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (let ((text (agentls-test--chat-text)))
        (should (string-match-p "^- read_file: .* · done$" text))
        ;; Markdown: paragraphs and the list of calls are apart.
        (should (string-match-p "## agentls\n\nLet me read it.\n\n- read_file: [^\n]* · done\n  - src/greek.txt\n\nIt has three lines.\n\n_turn ended: end_turn_" text))
        (should (string-search "It has three lines." text))
        (with-current-buffer (agentls--chat (agentls-test--conn))
          (goto-char (point-min))
          (let ((button (next-button (point))))
            (should button)
            (should (equal (button-label button) "src/greek.txt"))
            (push-button (button-start button))))
        (should (equal (buffer-file-name (window-buffer (selected-window))) path))))))

(defun agentls-test--edit-script (path)
  "A script whose model replaces beta with BETA in PATH, then answers."
  `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
            (:calls [(:name "replace" :args (:file_path ,path :old_string "beta" :new_string "BETA"))])
            (:text "Replaced beta.")]))

(ert-deftest agentls-test-edit-accept-undo ()
  "An edit is shown as a diff, accepted, saved, one undo step; its place is a note until the turn ends."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini (agentls-test--edit-script path)))
           (buf (agentls-test--start root "greek.txt" url)))
      (with-current-buffer buf (agentls "capitalize beta"))
      (let ((diff (agentls-test--diff-buffer)))
        (with-current-buffer diff
          (should (derived-mode-p 'diff-mode))
          (should (string-match-p "^-beta$" (agentls-test--text diff)))
          (should (string-match-p "^\\+BETA$" (agentls-test--text diff))))
        (should (string-match-p "^- replace: .* · awaiting approval$" (agentls-test--chat-text)))
        ;; The place the call touches, as a Flymake note while the turn runs.
        (agentls-test--wait (lambda () (agentls-test--notes buf)) "a Flymake note on greek.txt")
        (should (with-current-buffer buf flymake-mode))
        (should (string-search "agentls: " (car (agentls-test--notes buf))))
        (should (equal (agentls-test--text buf) "alpha\nbeta\ngamma\n"))
        (with-current-buffer diff (agentls-diff-accept))
        (should-not (buffer-live-p diff)))
      (agentls-test--wait (lambda () (equal (agentls-test--text buf) "alpha\nBETA\ngamma\n"))
                          "the edit in the buffer")
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (should (equal (agentls-test--disk path) "alpha\nBETA\ngamma\n"))
      (should-not (buffer-modified-p buf))
      (should (string-match-p "^- replace: .* · done$" (agentls-test--chat-text)))
      (should (string-search "Replaced beta." (agentls-test--chat-text)))
      (agentls-test--wait (lambda () (not (buffer-local-value 'flymake-mode buf)))
                          "the notes to clear at turn end (and Flymake, which agentls turned on, off)")
      ;; One undo reverts the whole edit.
      (with-current-buffer buf
        (undo-boundary)
        (undo)
        (should (equal (agentls-test--text buf) "alpha\nbeta\ngamma\n"))
        (should (buffer-modified-p))))))

(ert-deftest agentls-test-edit-reject ()
  "A rejected edit changes nothing; the chat says so."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini (agentls-test--edit-script path)))
           (buf (agentls-test--start root "greek.txt" url)))
      (with-current-buffer buf (agentls "capitalize beta"))
      (with-current-buffer (agentls-test--diff-buffer) (agentls-diff-reject))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (should (string-match-p "^- replace: .* · cancelled$" (agentls-test--chat-text)))
      (should (equal (agentls-test--text buf) "alpha\nbeta\ngamma\n"))
      (should (equal (agentls-test--disk path) "alpha\nbeta\ngamma\n"))
      (should-not (buffer-modified-p buf)))))

(ert-deftest agentls-test-edit-modified ()
  "The user edits the proposal and accepts that version."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini (agentls-test--edit-script path)))
           (buf (agentls-test--start root "greek.txt" url)))
      (with-current-buffer buf (agentls "capitalize beta"))
      (let ((proposal (with-current-buffer (agentls-test--diff-buffer) (agentls-diff-edit))))
        (set-buffer proposal)
        (should agentls-proposal-mode)
        (should (equal (agentls-test--text proposal) "alpha\nBETA\ngamma\n"))
        (goto-char (point-max))
        (insert "delta (mine)\n")
        (agentls-proposal-accept)
        (should-not (buffer-live-p proposal)))
      (agentls-test--wait (lambda () (equal (agentls-test--text buf) "alpha\nBETA\ngamma\ndelta (mine)\n"))
                          "the user's version in the buffer")
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (should (equal (agentls-test--disk path) "alpha\nBETA\ngamma\ndelta (mine)\n")))))

(ert-deftest agentls-test-shell-streams ()
  "A shell command is asked with its text; its output streams into a compilation buffer."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "one\ntwo\n") ("b.txt" . "bee\n"))))
           ;; The command waits after its first line until the test has looked
           ;; (it creates "release"): "still running" must not depend on how
           ;; fast a loaded machine is.
           (command "echo out-1; until test -e release; do sleep 0.05; done; for i in 2 3; do echo out-$i; sleep 0.5; done; echo 'a.txt:2: error: two is wrong'; echo 'b.txt:1: warning: bee'; echo finished-marker; exit 3")
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "run_shell_command" :args (:command ,command :description "count"))])
                           (:text "The command ran.")])))
           (buf (agentls-test--start root "a.txt" url))
           (asked nil)
           (mode-lines nil))
      (advice-add 'read-multiple-choice :around
                  (lambda (orig prompt choices &rest rest)
                    (push prompt asked)
                    ;; The user types y.
                    (setq unread-command-events (list ?y))
                    (apply orig prompt choices rest))
                  '((name . agentls-test)))
      (unwind-protect
          (progn
            (with-current-buffer buf (agentls "run it"))
            (let ((shell (agentls-test--wait
                          (lambda () (let ((b (get-buffer "*agentls shell: "
                                                          )))
                                       (ignore b)
                                       (cl-find-if (lambda (b) (with-current-buffer b
                                                                 (and (derived-mode-p 'agentls-shell-mode)
                                                                      (string-search "out-1" (buffer-string)))))
                                                   (buffer-list))))
                          "out-1 in the shell output buffer")))
              ;; Live: the command still runs when its first line shows.
              (should-not (string-search "\nfinished-marker" (agentls-test--text shell)))
              (should (string-match-p "^- run_shell_command: .* · running$" (agentls-test--chat-text)))
              (agentls-test--wait (lambda () (let ((m (agentls-mode-line)))
                                               (push m mode-lines)
                                               (string-search "out-" m)))
                                  "the latest output line in the mode line" 5)
              ;; `format-mode-line' gives "" in batch Emacs, so check the shape
              ;; the mode line needs: global-mode-string is a list whose first
              ;; element is a string (else its first symbol is read as a
              ;; conditional and the mode line shows *invalid*).
              (should (stringp (car global-mode-string)))
              (should (memq 'agentls--mode-line-construct global-mode-string))
              (with-temp-file (expand-file-name "release" root))
              (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
              (let ((text (agentls-test--text shell)))
                (should (string-search (concat "$ " command) text))
                (should (string-search "out-2" text))
                (should (string-search "\nfinished-marker\n" text))
                ;; The exit code, from the progress's end.
                (agentls-test--wait (lambda () (string-search "\n[done: Exit code 3]\n" (agentls-test--text shell)))
                                    "the exit code in the shell buffer" 5))
              (agentls-test--wait (lambda () (equal (agentls-mode-line) ""))
                                  "the mode line to go quiet after the prompt" 5)
              (should (= 1 (length asked)))
              (should (string-search command (car asked)))
              ;; The error line is a compilation error that visits a.txt:2.
              (with-current-buffer shell
                (should (derived-mode-p 'compilation-mode))
                (goto-char (point-min))
                (compilation-next-error 1)
                (compile-goto-error))
              (should (eq (window-buffer (selected-window)) buf))
              (should (= (line-number-at-pos) 2))
              ;; The same errors as Flymake diagnostics: in a.txt, open at the
              ;; time, and in b.txt, opened only now.
              (agentls-test--wait (lambda () (member "agentls/shell: error: two is wrong" (agentls-test--notes buf)))
                                  "the shell's error as a Flymake diagnostic in a.txt" 5)
              (let ((b (find-file-noselect (expand-file-name "b.txt" root))))
                (agentls-test--wait (lambda () (member "agentls/shell: warning: bee" (agentls-test--notes b)))
                                    "the shell's warning in b.txt, opened after the run" 5))))
        (advice-remove 'read-multiple-choice 'agentls-test)))))

(ert-deftest agentls-test-shell-rejected ()
  "A rejected command does not run."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "one\n"))))
           (url (agentls-test--fake-gemini
                 '(:turns [(:calls [(:name "run_shell_command" :args (:command "touch created-by-shell"))])
                           (:text "Not run.")])))
           (buf (agentls-test--start root "a.txt" url)))
      (advice-add 'read-multiple-choice :before
                  (lambda (&rest _) (setq unread-command-events (list ?n)))
                  '((name . agentls-test)))
      (unwind-protect
          (progn
            (with-current-buffer buf (agentls "touch it"))
            (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
            (should (string-match-p "^- run_shell_command: .* · cancelled$" (agentls-test--chat-text)))
            (should-not (file-exists-p (expand-file-name "created-by-shell" root))))
        (advice-remove 'read-multiple-choice 'agentls-test)))))

(ert-deftest agentls-test-cancel ()
  "agentls-cancel stops a hanging answer, then a running command; the session goes on."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "one\n"))))
           (url (agentls-test--fake-gemini
                 '(:turns [(:text "Starting a long answer" :hang t)
                           (:calls [(:name "run_shell_command"
                                           :args (:command "echo started-marker; sleep 30; echo not-reached"))])
                           (:text "Stopped.")])))
           (buf (agentls-test--start root "a.txt" url)))
      (with-current-buffer buf (agentls "write a lot"))
      (agentls-test--wait-chat "Starting a long answer" "the first chunks")
      (with-current-buffer buf (agentls-cancel))
      (agentls-test--wait-chat "_turn ended: cancelled" "the cancelled turn" 10)
      (agentls-test--wait (lambda () (not (buffer-local-value 'agentls--busy (agentls--chat (agentls-test--conn)))))
                          "the prompt's result")
      (let ((session (buffer-local-value 'agentls--session (agentls--chat (agentls-test--conn)))))
        (should session)
        (agentls-set-approval-mode "yolo")
        (with-current-buffer (agentls--chat (agentls-test--conn))
          (agentls "run something long"))
        (agentls-test--wait (lambda () (cl-find-if
                                        (lambda (b) (with-current-buffer b
                                                      (and (derived-mode-p 'agentls-shell-mode)
                                                           (string-search "started-marker" (buffer-string)))))
                                        (buffer-list)))
                            "the command to start")
        (let ((t0 (float-time)))
          (with-current-buffer buf (agentls-cancel))
          (agentls-test--wait (lambda () (= 2 (agentls-test--count "_turn ended: cancelled"
                                                                     (agentls-test--chat-text))))
                              "the second cancelled turn" 10)
          (should (< (- (float-time) t0) 10)))
        (should-not (string-search "\nnot-reached" (agentls-test--text (agentls--shell-buffer (agentls-test--conn)))))
        (should (equal (buffer-local-value 'agentls--session (agentls--chat (agentls-test--conn)))
                       session))
        (with-current-buffer (agentls--chat (agentls-test--conn))
          (let ((header (agentls--chat-header)))
            (should (string-search (format "session %s" session) header))
            (should (string-search "mode yolo" header))))))))

(ert-deftest agentls-test-ten-approvals ()
  "Ten edits in a row, each approved while Emacs is busy; each lands within a second."
  (agentls-test--with
    (let* ((lines (cl-loop for i from 1 to 10 collect (format "line %d" i)))
           (original (concat (mapconcat #'identity lines "\n") "\n"))
           (root (agentls-test--workspace `(("ten.txt" . ,original))))
           (path (expand-file-name "ten.txt" root))
           (turns (vconcat
                   (list `(:calls [(:name "read_file" :args (:file_path ,path))]))
                   (cl-loop for i from 1 to 10
                            collect `(:calls [(:name "replace"
                                                     :args (:file_path ,path
                                                                       :old_string ,(format "line %d\n" i)
                                                                       :new_string ,(format "LINE %d\n" i)))]))
                   (list '(:text "All ten done."))))
           (url (agentls-test--fake-gemini (list :turns turns)))
           (buf (agentls-test--start root "ten.txt" url))
           (delays nil))
      (with-current-buffer buf (agentls "capitalize every line"))
      (dotimes (i 10)
        (let ((diff (agentls-test--diff-buffer))
              (want (format "LINE %d\n" (1+ i))))
          (with-current-buffer diff (agentls-diff-accept))
          (let ((t0 (float-time)))
            ;; Busy, as redisplay or a loaded machine keeps Emacs: the
            ;; server's answer and its applyEdit arrive together.
            (agentls-test--busy 0.3)
            (agentls-test--wait (lambda () (string-search want (agentls-test--text buf)))
                                (format "edit %d in the buffer" (1+ i)) 5)
            (push (- (float-time) t0) delays))))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (message "approval-to-edit delays (s): %S" (mapcar (lambda (d) (/ (round (* d 1000)) 1000.0))
                                                         (reverse delays)))
      ;; A stalled edit waits for the next message, which here never comes before
      ;; the 5 s wait gives up; 2.5 s leaves room for a loaded machine's hiccup
      ;; (1.25 s seen once on CI) without hiding a stall.
      (should (cl-every (lambda (d) (< d 2.5)) delays))
      (should (equal (agentls-test--disk path) (upcase original))))))

(ert-deftest agentls-test-sessions ()
  "A stored session is chosen with completing-read and resumed by a new server."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("d.txt" . "d\n"))))
           (url (agentls-test--fake-gemini '(:turns [(:text "First answer.") (:text "Resumed answer.")])))
           (buf (agentls-test--start root "d.txt" url))
           id)
      (with-current-buffer buf (agentls "remember the word pelican"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the first answer")
      (setq id (buffer-local-value 'agentls--session (agentls--chat (agentls-test--conn))))
      (should id)
      (with-current-buffer buf (agentls-new-session))
      (should-not (buffer-local-value 'agentls--session (agentls--chat (agentls-test--conn))))
      (let ((offered nil))
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (_prompt table &rest _)
                     (setq offered (all-completions "" table))
                     (car offered))))
          (with-current-buffer buf (agentls-sessions))
          (agentls-test--wait (lambda () offered) "the session list")
          (should (string-search "remember the word pelican" (car offered)))))
      (agentls-test--wait-chat (format "_resumed session %s_" id) "the resume note")
      ;; The conversation so far is shown after the note, from agentls.sessionHistory.
      (agentls-test--wait-chat "_end of the resumed conversation_" "the resumed conversation")
      (let* ((text (agentls-test--chat-text))
             (note (string-search (format "_resumed session %s_" id) text))
             (asked (string-search "## You\n\nremember the word pelican" text note))
             (answered (and asked (string-search "First answer." text asked))))
        (should asked)
        (should answered)
        (should (< answered (string-search "_end of the resumed conversation_" text note))))
      (with-current-buffer buf (agentls "what was the word?"))
      (agentls-test--wait (lambda () (string-search "Resumed answer." (agentls-test--chat-text)))
                          "the resumed answer")
      (agentls-test--wait (lambda () (not (buffer-local-value 'agentls--busy (agentls--chat (agentls-test--conn)))))
                          "the prompt to end")
      (should (equal (buffer-local-value 'agentls--session (agentls--chat (agentls-test--conn))) id)))))

;; The session is free when its turn_end is sent, before the prompt's
;; response (docs/protocol.md): a person who starts a new session or types
;; the next prompt as soon as "turn ended" shows must not be told the agent
;; is still answering.  The advice acts at that very moment, inside the
;; handling of turn_end, when the response cannot have been read yet; the
;; stale response that follows must then change neither the busy state nor
;; the session of the prompt that runs by then.
(ert-deftest agentls-test-free-at-turn-end ()
  "A new session and a new prompt can start the moment a turn ends."
  (agentls-test--with
    (let* ((url (agentls-test--fake-gemini
                 '(:turns [(:text "Answer one.") (:text "Answer two.")
                           (:text "Answer three.") (:text "Answer four.")])))
           (root (agentls-test--workspace '(("e.txt" . "e\n"))))
           (buf (agentls-test--start root "e.txt" url))
           (next '(new-session "prompt two" "prompt three" new-session "prompt four"))
           (ended 0) sessions errors)
      (cl-flet ((at-turn-end (&rest _)
                  (cl-incf ended)
                  (push (buffer-local-value 'agentls--session (agentls--chat (agentls-test--conn)))
                        sessions)
                  ;; The steps up to the next prompt, as a person would take them.
                  (condition-case err
                      (let (sent)
                        (while (and next (not sent))
                          (let ((step (pop next)))
                            (with-current-buffer buf
                              (if (eq step 'new-session)
                                  (agentls-new-session)
                                (agentls step)
                                (setq sent t))))))
                    (error (push (error-message-string err) errors)))))
        (advice-add 'agentls--chat-turn-end :after #'at-turn-end '((name . agentls-test-turn-end)))
        (unwind-protect
            (progn
              (with-current-buffer buf (agentls "prompt one"))
              (agentls-test--wait (lambda () (or errors (= ended 4))) "four turns to end" 30)
              (should-not errors)
              (agentls-test--wait (lambda () (not (buffer-local-value 'agentls--busy (agentls--chat (agentls-test--conn)))))
                                  "the last prompt to end"))
          (advice-remove 'agentls--chat-turn-end 'agentls-test-turn-end)))
      (let ((text (agentls-test--chat-text))
            (chat (agentls--chat (agentls-test--conn))))
        (dolist (answer '("Answer one." "Answer two." "Answer three." "Answer four."))
          (should (string-search answer text)))
        (should (= 4 (agentls-test--count "_turn ended: end_turn" text)))
        (should (= 2 (agentls-test--count "_new session_" text)))
        ;; The sessions at each turn's end: prompt one's, then two's and
        ;; three's (one session, begun after "new session"), then four's.
        (setq sessions (reverse sessions))
        (should (cl-every #'stringp sessions))
        (should-not (equal (nth 0 sessions) (nth 1 sessions)))
        (should (equal (nth 1 sessions) (nth 2 sessions)))
        (should-not (member (nth 3 sessions) (list (nth 0 sessions) (nth 1 sessions))))
        ;; The late responses of the earlier prompts left the last one's session.
        (should (equal (buffer-local-value 'agentls--session chat) (nth 3 sessions)))
        (should-not (buffer-local-value 'agentls--busy chat))))))

(ert-deftest agentls-test-sync-answer-no-stall ()
  "Answers given through a synchronous request (as eglot's code actions do) do not stall.
jsonrpc 1.0.14 leaves the messages that arrive with such a request's
reply unread; the server's applyEdit is one of them.  Ten approvals
through agentls.confirm while Emacs is busy after each: every edit
lands well before the next message would have come."
  (agentls-test--with
    (let* ((lines (cl-loop for i from 1 to 10 collect (format "line %d" i)))
           (original (concat (mapconcat #'identity lines "\n") "\n"))
           (root (agentls-test--workspace `(("ten.txt" . ,original))))
           (path (expand-file-name "ten.txt" root))
           (turns (vconcat
                   (list `(:calls [(:name "read_file" :args (:file_path ,path))]))
                   (cl-loop for i from 1 to 10
                            collect `(:calls [(:name "replace"
                                                     :args (:file_path ,path
                                                                       :old_string ,(format "line %d\n" i)
                                                                       :new_string ,(format "LINE %d\n" i)))]))
                   (list '(:text "All ten done."))))
           (url (agentls-test--fake-gemini (list :turns turns)))
           (buf (agentls-test--start root "ten.txt" url))
           (conn (agentls-test--conn))
           (delays nil))
      (with-current-buffer buf (agentls "capitalize every line"))
      (dotimes (i 10)
        (let* ((diff (agentls-test--diff-buffer))
               (cid (plist-get (agentls--confirmation-details (buffer-local-value 'agentls--entry diff)) :id))
               (want (format "LINE %d\n" (1+ i)))
               (t0 (float-time)))
          ;; Busy right after sending the answer: its reply and the applyEdit
          ;; that follows arrive in one read.  Only after that send: the
          ;; notifications a timer sends meanwhile (didChange, a diagnostics
          ;; report) would each add their own busy time to the delay.
          (advice-add 'jsonrpc-connection-send :after
                      (let ((once t))
                        (lambda (&rest args)
                          (when (and once (equal (plist-get (cdr args) :method)
                                                 :workspace/executeCommand))
                            (setq once nil)
                            (agentls-test--busy 0.3))))
                      '((name . agentls-test-busy)))
          (unwind-protect
              (jsonrpc-request conn :workspace/executeCommand
                               (list :command "agentls.confirm"
                                     :arguments (vector (list :id cid :outcome "proceed_once"))))
            (advice-remove 'jsonrpc-connection-send 'agentls-test-busy))
          (agentls-test--wait (lambda () (string-search want (agentls-test--text buf)))
                              (format "edit %d in the buffer" (1+ i)) 5)
          (push (- (float-time) t0) delays)
          ;; The server took the question down: the diff buffer is gone.
          (agentls-test--wait (lambda () (not (buffer-live-p diff))) "the answered diff to close" 5)))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (message "delays (s): %S" (mapcar (lambda (d) (/ (round (* d 1000)) 1000.0)) (reverse delays)))
      (should (cl-every (lambda (d) (< d 1.0)) delays))
      (should (equal (agentls-test--disk path) (upcase original))))))

(ert-deftest agentls-test-failed-call ()
  "A failed call's error goes to the chat, not as a diagnostic left in the file."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
            (:calls [(:name "replace" :args (:file_path ,path :old_string "omega" :new_string "OMEGA"))])
                           (:text "It is not there.")])))
           (buf (agentls-test--start root "greek.txt" url (list :approvalMode "auto_edit"))))
      (with-current-buffer buf (agentls "capitalize omega"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (agentls-test--wait (lambda () (not (buffer-local-value 'agentls--busy (agentls--chat (agentls-test--conn)))))
                          "the prompt's result")
      (let ((text (agentls-test--chat-text)))
        (should (string-match-p "^- replace: .* · failed\n  - greek.txt\n  error: .*0 occurrences found for old_string" text))
        (should (string-search "It is not there." text)))
      (accept-process-output nil 0.3)
      (should-not (agentls-test--notes buf))
      (should (equal (agentls-test--text buf) "alpha\nbeta\n")))))

;; A hook of the user's settings that allows the call, and a second that adds context:
;; both lines are on the successful call's card, as in the other clients.
(ert-deftest agentls-test-hook-lines ()
  "What the user's hooks decided about a successful call is on its card."
  (agentls-test--with
    (let* ((config (make-temp-file "agentls-config-" t))
           (root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
                           (:text "Read it.")]))))
      (make-directory (expand-file-name "agentls" config) t)
      (with-temp-file (expand-file-name "agentls/settings.json" config)
        (insert (json-serialize
                 '(:hooks (:BeforeTool
                           [(:matcher "read_file"
                             :hooks [(:type "command" :name "guard"
                                      :command "cat >/dev/null; echo '{\"decision\":\"allow\"}'")
                                     (:type "command" :name "notes"
                                      :command "cat >/dev/null; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"BeforeTool\",\"additionalContext\":\"c\"}}'")])])))))
      (let ((buf (agentls-test--start root "greek.txt" url nil
                                      (list (concat "XDG_CONFIG_HOME=" config)))))
        (with-current-buffer buf (agentls "read greek.txt"))
        (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
        (let ((text (agentls-test--chat-text)))
          (should (string-match-p "^- read_file: .* · done\n\\(  - greek.txt\n\\)?\\(  hook \\(guard\\|notes\\) (BeforeTool): .*\n\\)\\{2\\}" text))
          (should (string-search "  hook guard (BeforeTool): allowed\n" text))
          (should (string-search "  hook notes (BeforeTool): added context" text)))))))

(ert-deftest agentls-test-plan ()
  "The plan shows in the chat and is updated in place."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (url (agentls-test--fake-gemini
                 '(:turns [(:calls [(:name "write_todos"
                                          :args (:todos [(:description "Read the file" :status "in_progress")
                                                         (:description "Fix the bug" :status "pending")]))])
                           (:calls [(:name "write_todos"
                                          :args (:todos [(:description "Read the file" :status "completed")
                                                         (:description "Fix the bug" :status "in_progress")]))])
                           (:text "Planned.")])))
           (buf (agentls-test--start root "a.txt" url)))
      (with-current-buffer buf (agentls "plan it"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (let ((text (agentls-test--chat-text)))
        (should (string-search "Plan:\n  [x] Read the file\n  [>] Fix the bug\n" text))
        (should (= 1 (agentls-test--count "Plan:" text)))))))

(ert-deftest agentls-test-trust-question ()
  "The server's own question (trust this folder?) offers its choices; trusting applies the folder's settings."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n")
                                            (".agentls/settings.json" . "{\"approvalMode\": \"yolo\"}\n"))))
           (url (agentls-test--fake-gemini
                 '(:turns [(:calls [(:name "run_shell_command" :args (:command "touch ran-without-asking"))])
                           (:text "Done.")])))
           (asked nil))
      (advice-add 'read-multiple-choice :around
                  (lambda (orig prompt choices &rest rest)
                    (push (cons prompt (mapcar #'cadr choices)) asked)
                    (setq unread-command-events
                          (list (car (cl-find "Trust this folder" choices :key #'cadr :test #'equal))))
                    (apply orig prompt choices rest))
                  '((name . agentls-test)))
      (unwind-protect
          (let ((buf (agentls-test--start root "a.txt" url)))
            (agentls-test--wait (lambda () asked) "the trust question")
            (should (string-search "Trust this folder?" (car (car asked))))
            (should (equal (cdr (car asked)) '("Trust this folder" "Trust the parent folder" "Not now")))
            ;; Trusted: the folder's yolo applies, the command runs without asking.
            ;; The server says so once it has re-read the settings; not before.
            (agentls-test--wait (lambda () (with-current-buffer (messages-buffer)
                                             (save-excursion
                                               (goto-char (point-min))
                                               (search-forward "is trusted: its settings apply" nil t))))
                                "the server to apply the trusted folder's settings")
            (with-current-buffer buf (agentls "touch it"))
            (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
            (should (file-exists-p (expand-file-name "ran-without-asking" root)))
            (should (= 1 (length asked))))
        (advice-remove 'read-multiple-choice 'agentls-test)))))

(ert-deftest agentls-test-diff-killed ()
  "Killing the diff buffer without deciding rejects the edit."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini (agentls-test--edit-script path)))
           (buf (agentls-test--start root "greek.txt" url)))
      (with-current-buffer buf (agentls "capitalize beta"))
      (kill-buffer (agentls-test--diff-buffer))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (should (string-match-p "^- replace: .* · cancelled$" (agentls-test--chat-text)))
      (should (equal (agentls-test--text buf) "alpha\nbeta\ngamma\n")))))

(ert-deftest agentls-test-beside-eglot ()
  "agentls.el runs beside the buffer's own eglot server and leaves it in charge.
A second agentls stands in for the user's language server (gopls and
the like): eglot keeps managing the buffer and its Flymake backend,
while agentls.el's edit lands through its own connection."
  (require 'eglot)
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini (agentls-test--edit-script path)))
           (buf (find-file-noselect path))
           (eglot-server-programs `((text-mode . (,agentls-test-bin "serve"))))
           (eglot-autoreconnect nil)
           eglot-server)
      (with-current-buffer buf
        (unless (derived-mode-p 'text-mode) (text-mode))
        (apply #'eglot (eglot--guess-contact))
        (agentls-test--wait (lambda () (and (eglot-current-server) (eglot-managed-p)))
                            "eglot to manage the buffer")
        (setq eglot-server (eglot-current-server)))
      (unwind-protect
          (progn
            (agentls-test--start root "greek.txt" url)
            (should-not (eq (agentls-test--conn) eglot-server))
            (should-not (eq (jsonrpc--process (agentls-test--conn)) (jsonrpc--process eglot-server)))
            (with-current-buffer buf (agentls "capitalize beta"))
            (let ((diff (agentls-test--diff-buffer)))
              (agentls-test--wait (lambda () (agentls-test--notes buf)) "agentls's note beside eglot's backend")
              (with-current-buffer buf
                (should (memq 'eglot-flymake-backend flymake-diagnostic-functions))
                (should (memq 'agentls-flymake-backend flymake-diagnostic-functions)))
              (with-current-buffer diff (agentls-diff-accept)))
            (agentls-test--wait (lambda () (equal (agentls-test--text buf) "alpha\nBETA\ngamma\n"))
                                "the edit in the buffer")
            (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
            (should (equal (agentls-test--disk path) "alpha\nBETA\ngamma\n"))
            (with-current-buffer buf
              (should (eglot-managed-p))
              (should (eq (eglot-current-server) eglot-server))
              ;; Flymake was eglot's: it stays on, with eglot's backend.
              (agentls-test--wait (lambda () (null (agentls-test--notes buf))) "agentls's notes to clear")
              (should flymake-mode)
              (should (memq 'eglot-flymake-backend flymake-diagnostic-functions))))
        (when (jsonrpc-running-p eglot-server)
          (ignore-errors (eglot-shutdown eglot-server)))))))

(defun agentls-test--fake-backend (report-fn &rest _)
  "A Flymake backend with one error on line 2, as gopls might report.
REPORT-FN gets it."
  (funcall report-fn
           (list (flymake-make-diagnostic (current-buffer)
                                          (save-excursion (goto-char (point-min)) (forward-line 1) (point))
                                          (save-excursion (goto-char (point-min)) (forward-line 1) (line-end-position))
                                          :error "undefined: betaa"))))

(ert-deftest agentls-test-fix-diagnostic ()
  "Another backend's diagnostic at point becomes a prompt with its line as context."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "alpha\nbetaa\ngamma\n"))))
           (url (agentls-test--fake-gemini '(:turns [(:text "That is a typo.")])))
           (buf (agentls-test--start root "a.txt" url)))
      (with-current-buffer buf
        (setq-local flymake-diagnostic-functions (list #'agentls-test--fake-backend))
        (flymake-mode 1)
        (flymake-start)
        (agentls-test--wait (lambda () (flymake-diagnostics)) "the other backend's diagnostic")
        (goto-char (point-min))
        (forward-line 1)
        (forward-char 2)
        (agentls-fix-diagnostic-at-point))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (let ((text (agentls-test--chat-text)))
        (should (string-search "Fix this problem at a.txt:2: undefined: betaa\n\n_context: a.txt:2-2_" text))
        (should (string-search "That is a typo." text))))))

(ert-deftest agentls-test-unsaved-edit-warned ()
  "With saving after edits off, the shell question names the agent's unsaved edits."
  (agentls-test--with
    (let* ((agentls-save-after-edit nil)
           (root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
            (:calls [(:name "replace" :args (:file_path ,path :old_string "beta" :new_string "BETA"))])
                           (:calls [(:name "run_shell_command" :args (:command "cat greek.txt"))])
                           (:text "Done.")])))
           (buf (agentls-test--start root "greek.txt" url))
           (asked nil))
      (advice-add 'read-multiple-choice :around
                  (lambda (orig prompt choices &rest rest)
                    (push prompt asked)
                    (setq unread-command-events (list ?n))
                    (apply orig prompt choices rest))
                  '((name . agentls-test)))
      (unwind-protect
          (progn
            (with-current-buffer buf (agentls "capitalize beta, then show it"))
            (with-current-buffer (agentls-test--diff-buffer) (agentls-diff-accept))
            (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
            (should (equal (agentls-test--text buf) "alpha\nBETA\ngamma\n"))
            (should (buffer-modified-p buf))
            (should (equal (agentls-test--disk path) "alpha\nbeta\ngamma\n"))
            (should (= 1 (length asked)))
            (should (string-search "Not saved yet, so the command sees the old text: greek.txt" (car asked))))
        (advice-remove 'read-multiple-choice 'agentls-test)))))

(ert-deftest agentls-test-accept-always ()
  "Accepting always lets the session's next edit through without a diff."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
            (:calls [(:name "replace" :args (:file_path ,path :old_string "beta" :new_string "BETA"))])
                           (:calls [(:name "replace" :args (:file_path ,path :old_string "gamma" :new_string "GAMMA"))])
                           (:text "Both done.")])))
           (buf (agentls-test--start root "greek.txt" url))
           (diffs 0))
      (with-current-buffer buf (agentls "capitalize beta and gamma"))
      (with-current-buffer (agentls-test--diff-buffer) (agentls-diff-accept-always))
      (advice-add 'agentls--show-edit :before (lambda (&rest _) (cl-incf diffs)) '((name . agentls-test)))
      (unwind-protect
          (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
        (advice-remove 'agentls--show-edit 'agentls-test))
      (should (= diffs 0))
      (should (equal (agentls-test--text buf) "alpha\nBETA\nGAMMA\n"))
      (should (equal (agentls-test--disk path) "alpha\nBETA\nGAMMA\n")))))

(ert-deftest agentls-test-start-failure ()
  "Settings the server refuses: the chat and the echo area say why, nothing hangs."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (buf (find-file-noselect (expand-file-name "a.txt" root))))
      (setq agentls-server-program (append (list agentls-test-bin "serve") agentls-test--server-args)
            agentls-server-environment nil
            agentls-initialization-options '(:approvalMode "sometimes"))
      (let ((chat (with-current-buffer buf (agentls "hello"))))
        (agentls-test--wait (lambda () (string-search "_agentls exited: could not start: "
                                                      (agentls-test--text chat)))
                            "the reason in the chat" 10)
        (should (string-search "unknown approval mode" (agentls-test--text chat)))
        (should-not (buffer-local-value 'agentls--busy chat)))
      (should-not (agentls-test--conn))
      (should (equal (agentls-mode-line) "")))))

(ert-deftest agentls-test-events-log ()
  "The JSON-RPC log of `agentls-events-buffer-size' holds the messages as JSON.
jsonrpc 1.0.2x (Emacs 29 and later) logs each message as pretty-printed
Lisp unless told the format, which costs time on every message (Emacs
30's `pp' is slow on large ones); jsonrpc 1.0.14 (Emacs 28) always does."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (buf (agentls-test--start root "a.txt" nil))
           (conn (agentls-test--conn)))
      (ignore buf)
      (let ((log (with-current-buffer (jsonrpc-events-buffer conn)
                   (buffer-substring-no-properties (point-min) (point-max)))))
        (if (slot-exists-p 'jsonrpc-connection '-events-buffer-config)
            (progn
              (should (string-search "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"" log))
              (should-not (string-search "(:jsonrpc \"2.0\"" log)))
          (should (string-search ":method \"initialize\"" log)))))))

(ert-deftest agentls-test-tilde-program ()
  "A program named with ~ is found and started."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (link (expand-file-name "agentls-tilde-test" "~")))
      (make-symbolic-link agentls-test-bin link t)
      (unwind-protect
          (let ((agentls-server-program '("~/agentls-tilde-test" "serve")))
            (with-current-buffer (find-file-noselect (expand-file-name "a.txt" root))
              (let ((conn (agentls--connection)))
                (agentls-test--wait (lambda () (agentls--ready conn)) "the server to start")
                (should (equal (car (process-command (jsonrpc--process conn))) link)))))
        (delete-file link)))))

(ert-deftest agentls-test-non-ascii ()
  "Unsaved edits with emoji and accents reach the server; its edit lands on the right characters."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("u.txt" . "héllo 😀 wörld\n日本語 second line\n"))))
           (path (expand-file-name "u.txt" root))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
            (:calls [(:name "replace" :args (:file_path ,path :old_string "wörld 🎉" :new_string "WÖRLD 🎊"))])
                           (:text "Done.")])))
           (buf (agentls-test--start root "u.txt" url (list :approvalMode "auto_edit"))))
      ;; The user types before asking: unsaved text the server must see.
      (with-current-buffer buf
        (goto-char (point-min))
        (search-forward "wörld")
        (insert " 🎉")
        (goto-char (point-max))
        (insert "ünïcödé 🙂 third\n")
        (agentls "shout the world"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (should (string-match-p "^- replace: .* · done$" (agentls-test--chat-text)))
      (should (equal (agentls-test--text buf) "héllo 😀 WÖRLD 🎊\n日本語 second line\nünïcödé 🙂 third\n"))
      (should (equal (agentls-test--disk path) "héllo 😀 WÖRLD 🎊\n日本語 second line\nünïcödé 🙂 third\n")))))

(ert-deftest agentls-test-compose ()
  "C-u M-x agentls: a multi-line prompt written in a buffer, sent with the region as context."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "alpha\nbeta\ngamma\n"))))
           (url (agentls-test--fake-gemini '(:turns [(:text "Composed answer.")])))
           (buf (agentls-test--start root "a.txt" url)))
      (with-current-buffer buf
        (transient-mark-mode 1)
        (goto-char (point-min))
        (forward-line 1)
        (set-mark (point))
        (forward-line 1)
        (activate-mark)
        (let ((current-prefix-arg '(4)))
          (call-interactively #'agentls)))
      (let ((compose (get-buffer "*agentls compose*")))
        (should compose)
        (with-current-buffer compose
          (should (derived-mode-p 'agentls-compose-mode))
          (insert "first line of the prompt\nsecond line")
          (agentls-compose-send))
        (should-not (buffer-live-p compose)))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (let ((text (agentls-test--chat-text)))
        (should (string-search "## You\n\nfirst line of the prompt\nsecond line\n\n_context: a.txt:2-2_" text))
        (should (string-search "Composed answer." text))))))

(defun agentls-test--server-text (file)
  "FILE's text as the server sees it (read_file through agentls/runTool)."
  (let* ((conn (agentls-test--conn))
         (done nil) result)
    (agentls--async conn :agentls/runTool (list :name "read_file" :args (list :file_path file))
                    (lambda (r) (setq result r done t))
                    (lambda (e) (setq result e done t)))
    (agentls-test--wait (lambda () done) "read_file through agentls/runTool")
    (unless (equal (plist-get result :status) "success")
      (ert-fail (list "read_file failed" result)))
    (plist-get result :output)))

(ert-deftest agentls-test-sync ()
  "The server sees the buffer as it is after all kinds of edits, sent whole or as changes."
  (agentls-test--with
    (let* ((root (agentls-test--workspace
                  `(("s.txt" . ,(mapconcat (lambda (i) (format "line %d with some text\n" i))
                                           (number-sequence 1 40) "")))))
           (path (expand-file-name "s.txt" root))
           (buf (agentls-test--start root "s.txt" nil)))
      (dolist (size (list most-positive-fixnum 0))
        (let ((agentls-incremental-sync-size size)
              (ranged 0) (whole 0))
          (advice-add 'jsonrpc-notify :before
                      (lambda (_conn method params)
                        (when (eq method :textDocument/didChange)
                          (seq-doseq (c (plist-get params :contentChanges))
                            (if (plist-get c :range) (cl-incf ranged) (cl-incf whole)))))
                      '((name . agentls-test-count)))
          (with-current-buffer buf
            (let ((check (lambda (what)
                           (should (equal (list what (agentls-test--server-text path))
                                          (list what (agentls-test--text buf)))))))
              (goto-char (point-min))
              (insert "first 😀 ")
              (funcall check "an insertion at the start")
              (goto-char (point-min))
              (forward-line 3)
              (delete-region (point) (progn (forward-line 4) (point)))
              (funcall check "a deletion of whole lines")
              (goto-char (point-min))
              (forward-line 2)
              (end-of-line)
              (insert "\ninserted 日本語\nlines 🙂 é\n")
              (search-forward "with")
              (replace-match "WITH")
              (funcall check "a multi-line insertion after emoji, then a replacement")
              (upcase-region (point-min) (line-end-position 5))
              (transpose-lines 1)
              (indent-rigidly (point-min) (point-max) 2)
              (funcall check "region commands")
              (undo-boundary)
              (primitive-undo 3 buffer-undo-list)
              (goto-char (point-max))
              (delete-char -1)
              (funcall check "undo, and no final newline")
              (erase-buffer)
              (funcall check "an empty buffer")
              (insert-file-contents path nil nil nil t)
              (funcall check "the file reread")
              (insert "x")
              (revert-buffer t t t)
              (funcall check "a reverted buffer")))
          (advice-remove 'jsonrpc-notify 'agentls-test-count)
          ;; Whole texts for small buffers; changes (and a whole text only
          ;; where a change came unannounced) for large ones.
          (if (= size 0)
              (should (> ranged 10))
            (should (= ranged 0)))
          (should (> whole 0)))))))

(ert-deftest agentls-test-apply-text-edits ()
  "Text edits apply as LSP orders them, as one undo step."
  (with-temp-buffer
    (insert "abc\ndef\n")
    (buffer-enable-undo)
    (undo-boundary)
    (agentls--apply-text-edits
     (vector (list :range (list :start (list :line 0 :character 1) :end (list :line 0 :character 1)) :newText "X")
             (list :range (list :start (list :line 0 :character 1) :end (list :line 0 :character 1)) :newText "Y")
             (list :range (list :start (list :line 1 :character 0) :end (list :line 1 :character 3)) :newText "DEF")
             (list :range (list :start (list :line 2 :character 0) :end (list :line 2 :character 0)) :newText "ghi\n")))
    (should (equal (buffer-string) "aXYbc\nDEF\nghi\n"))
    (undo)
    (should (equal (buffer-string) "abc\ndef\n"))))

(ert-deftest agentls-test-show-pending ()
  "A diff put away without an answer comes back with agentls-show-pending."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini (agentls-test--edit-script path)))
           (buf (agentls-test--start root "greek.txt" url)))
      (with-current-buffer buf (agentls "capitalize beta"))
      (let ((diff (agentls-test--diff-buffer)))
        (switch-to-buffer buf)
        (delete-other-windows)
        (should-not (get-buffer-window diff))
        (should (string-search "1 waiting for you" (agentls-mode-line)))
        (agentls-show-pending)
        (should (eq (window-buffer (selected-window)) diff))
        (agentls-diff-accept))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (should (equal (agentls-test--disk path) "alpha\nBETA\ngamma\n")))))

(ert-deftest agentls-test-file-names ()
  "A file whose name has spaces, accents and percent signs is edited in its open buffer."
  (agentls-test--with
    (let* ((rel "dir with space/naïve 100%.txt")
           (root (agentls-test--workspace `((,rel . "alpha\nbeta\n"))))
           (path (expand-file-name rel root))
           (url (agentls-test--fake-gemini (agentls-test--edit-script path)))
           (buf (agentls-test--start root rel url)))
      ;; An unsaved change: the edit must go to the buffer, not the file.
      (with-current-buffer buf
        (goto-char (point-max))
        (insert "gamma\n")
        (agentls "capitalize beta"))
      (let ((diff (agentls-test--diff-buffer)))
        (should (string-search "naïve 100%.txt" (buffer-name diff)))
        (with-current-buffer diff (agentls-diff-accept)))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (should (string-match-p "^  - dir with space/naïve 100%.txt$" (agentls-test--chat-text)))
      (should (equal (agentls-test--text buf) "alpha\nBETA\ngamma\n"))
      (should (equal (agentls-test--disk path) "alpha\nBETA\ngamma\n"))
      (should (= 1 (cl-count-if (lambda (b) (equal (buffer-file-name b) path)) (buffer-list)))))))

(ert-deftest agentls-test-run-tool ()
  "Tools run by hand: a read's result in the chat, an edit through the diff, a bad argument refused."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\n"))))
           (buf (agentls-test--start root "greek.txt" nil))
           (conn (agentls-test--conn)))
      (agentls-test--wait (lambda () (member "read_file" (agentls--tool-names conn)))
                          "the tool names for completion")
      (with-current-buffer buf
        (agentls-run-tool "read_file" "{\"file_path\": \"greek.txt\"}"))
      (agentls-test--wait-chat "_success: " "the read's result")
      (should (string-search "## Tool\n\nread_file {\"file_path\":\"greek.txt\"}\n\n_success: Read greek.txt (2 lines)_\n\n```\nalpha\nbeta\n```" (agentls-test--chat-text)))
      (with-current-buffer buf
        (agentls-run-tool "replace" '(:file_path "greek.txt" :old_string "beta" :new_string "BETA")))
      (with-current-buffer (agentls-test--diff-buffer) (agentls-diff-accept))
      (agentls-test--wait (lambda () (= 2 (agentls-test--count "_success" (agentls-test--chat-text))))
                          "the edit's result")
      (should (equal (agentls-test--text buf) "alpha\nBETA\n"))
      (should (equal (agentls-test--disk (expand-file-name "greek.txt" root)) "alpha\nBETA\n"))
      (should-error (agentls-run-tool "read_file" "[1, 2]") :type 'user-error)
      (should-error (agentls-run-tool "read_file" "{not json") :type 'user-error))))

(ert-deftest agentls-test-edit-hunks ()
  "Hunks of a proposed edit toggled in the diff buffer: only the others are applied, and the model is told."
  (agentls-test--with
    (let* ((old (mapconcat (lambda (i) (format "line %d\n" i)) (number-sequence 1 30) ""))
           (new (replace-regexp-in-string
                 "^line \\(2\\|15\\|29\\)$" (lambda (m) (upcase m)) old t))
           (root (agentls-test--workspace `(("f.txt" . ,old))))
           (path (expand-file-name "f.txt" root))
           (buf (agentls-test--start root "f.txt" nil)))
      (with-current-buffer buf
        (agentls-run-tool "write_file" (list :file_path "f.txt" :content new)))
      (let ((diff (agentls-test--diff-buffer)))
        (with-current-buffer diff
          (should (= 3 (length (agentls--diff-hunks agentls--entry))))
          ;; Before the first hunk, nothing to toggle.
          (goto-char (point-min))
          (should-error (agentls-diff-toggle-hunk) :type 'user-error)
          ;; Reject the second hunk, toggle the third twice (accepted again).
          (goto-char (point-min))
          (re-search-forward "^\\+LINE 15$")
          (agentls-diff-toggle-hunk)
          (should (equal agentls--rejected-hunks '(1)))
          (should (cl-some (lambda (ov) (overlay-get ov 'agentls-hunk)) (overlays-in (point-min) (point-max))))
          (re-search-forward "^\\+LINE 29$")
          (agentls-diff-toggle-hunk)
          (agentls-diff-toggle-hunk)
          (should (equal agentls--rejected-hunks '(1)))
          (agentls-diff-submit-hunks))
        (should-not (buffer-live-p diff)))
      (let ((want (replace-regexp-in-string "^line \\(2\\|29\\)$" (lambda (m) (upcase m)) old t)))
        (agentls-test--wait (lambda () (equal (agentls-test--text buf) want)) "the accepted hunks in the buffer")
        (agentls-test--wait-chat "The user accepted hunks 1 and 3 of 3; hunk 2 was not applied" "the note to the model")
        (should (equal (agentls-test--disk path) want))))))

(ert-deftest agentls-test-ask-user ()
  "The model's ask_user: each kind of question is asked in the minibuffer, the answers return; quitting dismisses all."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (buf (agentls-test--start root "a.txt" nil))
           (questions (vector (list :question "Which database?" :header "DB" :type "choice"
                                    :options (vector (list :label "Postgres" :description "the server")
                                                     (list :label "SQLite" :description "a file")))
                              (list :question "Name the table" :header "Table" :type "text" :placeholder "e.g. users")
                              (list :question "Add an index?" :header "Index" :type "yesno")
                              (list :question "Which columns?" :header "Cols" :type "choice" :multiSelect t
                                    :options (vector (list :label "id" :description "")
                                                     (list :label "name" :description "")))))
           (asked nil))
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt collection &rest _)
                   (push prompt asked)
                   (if (member "SQLite" collection) "SQLite"
                     (should (equal collection '("Yes" "No")))
                     "Yes")))
                ((symbol-function 'read-string)
                 (lambda (prompt &rest _)
                   (push prompt asked)
                   (if (string-search "Which columns" prompt)
                       (progn (should (string-search "one or more of: id, name" prompt)) "id, name")
                     (should (string-search "e.g. users" prompt))
                     "accounts"))))
        (with-current-buffer buf
          (agentls-run-tool "ask_user" (list :questions questions)))
        (agentls-test--wait-chat "id, name" "the answers in the call's result")
        (let ((text (agentls-test--chat-text)))
          (dolist (want '("SQLite" "accounts" "Yes"))
            (should (string-search want text))))
        (should (= 4 (length asked)))
        (should (string-search "DB: Which database?" (car (last asked)))))
      ;; Quitting the first question dismisses them all: nothing is answered.
      (setq asked nil)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt &rest _) (push prompt asked) (signal 'quit nil)))
                ((symbol-function 'read-string)
                 (lambda (&rest _) (error "No question after a dismissed one"))))
        (with-current-buffer buf
          (agentls-run-tool "ask_user" (list :questions questions)))
        (agentls-test--wait-chat "dismissed" "the dismissed questions")
        (should (= 1 (length asked)))))))

(ert-deftest agentls-test-accept-always-save ()
  "Accept always and save: the rule lands in the user's settings file, and later edits are not asked."
  (let* ((config (make-temp-file "agentls-el-config-" t))
         (settings (expand-file-name "agentls/settings.json" config))
         (process-environment (cons (concat "XDG_CONFIG_HOME=" config) process-environment)))
    (agentls-test--with
      (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
             (buf (agentls-test--start root "greek.txt" nil))
             (diffs 0))
        (with-current-buffer buf
          (agentls-run-tool "replace" '(:file_path "greek.txt" :old_string "beta" :new_string "BETA")))
        (with-current-buffer (agentls-test--diff-buffer) (agentls-diff-accept-always-save))
        (agentls-test--wait (lambda () (equal (agentls-test--text buf) "alpha\nBETA\ngamma\n")) "the edit")
        (agentls-test--wait (lambda () (file-exists-p settings)) "the user's settings file")
        (let ((rules (plist-get (plist-get (json-parse-string (agentls-test--disk settings) :object-type 'plist)
                                           :policy)
                                :rules)))
          (should (= 1 (length rules)))
          (should (equal (plist-get (aref rules 0) :toolName) "replace"))
          (should (equal (plist-get (aref rules 0) :decision) "allow")))
        (advice-add 'agentls--show-edit :before (lambda (&rest _) (cl-incf diffs)) '((name . agentls-test)))
        (unwind-protect
            (progn
              (with-current-buffer buf
                (agentls-run-tool "replace" '(:file_path "greek.txt" :old_string "gamma" :new_string "GAMMA")))
              (agentls-test--wait (lambda () (equal (agentls-test--text buf) "alpha\nBETA\nGAMMA\n")) "the second edit"))
          (advice-remove 'agentls--show-edit 'agentls-test))
        (should (= diffs 0))))))

(ert-deftest agentls-test-shell-always-save ()
  "A shell command answered \"always, and save\": the rule lands in the user's settings file."
  (let* ((config (make-temp-file "agentls-el-config-" t))
         (settings (expand-file-name "agentls/settings.json" config))
         (process-environment (cons (concat "XDG_CONFIG_HOME=" config) process-environment)))
    (agentls-test--with
      (let* ((root (agentls-test--workspace '(("a.txt" . "one\n"))))
             (url (agentls-test--fake-gemini
                   '(:turns [(:calls [(:name "run_shell_command" :args (:command "touch created-by-shell"))])
                             (:text "Ran.")])))
             (buf (agentls-test--start root "a.txt" url))
             (labels nil))
        (advice-add 'read-multiple-choice :before
                    (lambda (_prompt choices &rest _)
                      (setq labels (mapcar #'cadr choices))
                      (setq unread-command-events (list ?S)))
                    '((name . agentls-test)))
        (unwind-protect
            (progn
              (with-current-buffer buf (agentls "touch it"))
              (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
              (should (member "Always allow touch, and save it in your settings" labels))
              (should (file-exists-p (expand-file-name "created-by-shell" root)))
              (agentls-test--wait (lambda () (file-exists-p settings)) "the user's settings file")
              (let ((rule (aref (plist-get (plist-get (json-parse-string (agentls-test--disk settings) :object-type 'plist)
                                                      :policy)
                                           :rules)
                                0)))
                (should (equal (plist-get rule :toolName) "run_shell_command"))
                (should (equal (plist-get rule :commandPrefix) ["touch"]))))
          (advice-remove 'read-multiple-choice 'agentls-test))))))

;;;; Issue 21: the server's choices

(defconst agentls-test--touch-choices
  '((?y . "Allow once") (?a . "Always allow touch for this session")
    (?S . "Always allow touch, and save it in your settings")
    (?n . "Reject") (?N . "Always reject touch for this session"))
  "The keys and labels of a question about a shell command whose program is touch.
The labels are the server's; the keys the package's, by choice id.")

(defun agentls-test--answer-with (keys asked)
  "Advise `read-multiple-choice' to answer the questions by typing KEYS.
KEYS holds one key per question, in the order they are asked.  The
\(KEY . LABEL) pairs of each question are pushed onto the symbol
ASKED's value."
  (advice-remove 'read-multiple-choice 'agentls-test)
  (advice-add 'read-multiple-choice :around
              (lambda (orig prompt choices &rest rest)
                (set asked (cons (mapcar (lambda (c) (cons (car c) (cadr c))) choices)
                                 (symbol-value asked)))
                (unless keys (error "An unexpected question: %s" prompt))
                (unless (assq (car keys) choices)
                  (error "No key %c among %S" (car keys) choices))
                ;; The user types the key.
                (setq unread-command-events (list (pop keys)))
                (apply orig prompt choices rest))
              '((name . agentls-test))))

(defvar agentls-test--asked nil "The keys and labels of the questions asked, newest first.")

(ert-deftest agentls-test-reject-always ()
  "The server's labels are shown; \"always reject\" refuses the next touch of the session unasked."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "one\n"))))
           (url (agentls-test--fake-gemini
                 '(:turns [(:calls [(:name "run_shell_command" :args (:command "touch first-marker"))])
                           (:calls [(:name "run_shell_command" :args (:command "touch second-marker"))])
                           (:calls [(:name "run_shell_command" :args (:command "mkdir made-dir"))])
                           (:text "Done.")])))
           (buf (agentls-test--start root "a.txt" url)))
      (setq agentls-test--asked nil)
      ;; N rejects touch always; the control, mkdir, is still asked about (y).
      (agentls-test--answer-with '(?N ?y) 'agentls-test--asked)
      (unwind-protect
          (progn
            (with-current-buffer buf (agentls "touch twice, then mkdir"))
            (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
            (should (= 2 (length agentls-test--asked)))
            (should (equal (cadr agentls-test--asked) agentls-test--touch-choices))
            (should (equal (assq ?N (car agentls-test--asked)) '(?N . "Always reject mkdir for this session")))
            (should-not (file-exists-p (expand-file-name "first-marker" root)))
            (should-not (file-exists-p (expand-file-name "second-marker" root)))
            (should (file-directory-p (expand-file-name "made-dir" root)))
            (let ((lines (cl-remove-if-not (lambda (l) (string-prefix-p "- run_shell_command: " l))
                                           (split-string (agentls-test--chat-text) "\n"))))
              (should (= 3 (length lines)))
              (should (string-suffix-p " · cancelled" (nth 0 lines)))
              ;; Refused by the session's "always reject", unasked.
              (should (string-match-p " · \\(cancelled\\|failed\\)$" (nth 1 lines)))
              (should (string-suffix-p " · done" (nth 2 lines)))))
        (advice-remove 'read-multiple-choice 'agentls-test)))))

(ert-deftest agentls-test-always-session-scoped ()
  "\"Always allow\" lasts for its session: the next session asks again."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "one\n"))))
           (url (agentls-test--fake-gemini
                 '(:turns [(:calls [(:name "run_shell_command" :args (:command "touch s1-first"))])
                           (:calls [(:name "run_shell_command" :args (:command "touch s1-second"))])
                           (:text "First session done.")
                           (:calls [(:name "run_shell_command" :args (:command "touch s2-first"))])
                           (:text "Second session done.")])))
           (buf (agentls-test--start root "a.txt" url)))
      (setq agentls-test--asked nil)
      (agentls-test--answer-with '(?a) 'agentls-test--asked)
      (unwind-protect
          (let (first-session)
            (with-current-buffer buf (agentls "touch twice"))
            (agentls-test--wait-chat "First session done." "the first answer")
            (agentls-test--wait (lambda () (not (buffer-local-value 'agentls--busy (agentls--chat (agentls-test--conn)))))
                                "the first prompt to end")
            (should (equal agentls-test--asked (list agentls-test--touch-choices)))
            (should (file-exists-p (expand-file-name "s1-first" root)))
            (should (file-exists-p (expand-file-name "s1-second" root)))
            (setq first-session (buffer-local-value 'agentls--session (agentls--chat (agentls-test--conn))))
            (should (stringp first-session))
            (with-current-buffer buf
              (agentls-new-session)
              (agentls-test--answer-with '(?n) 'agentls-test--asked)
              (agentls "touch again"))
            (agentls-test--wait-chat "Second session done." "the second answer")
            (should-not (equal first-session
                               (buffer-local-value 'agentls--session (agentls--chat (agentls-test--conn)))))
            (should (= 2 (length agentls-test--asked)))
            (should (equal (car agentls-test--asked) agentls-test--touch-choices))
            (should-not (file-exists-p (expand-file-name "s2-first" root))))
        (advice-remove 'read-multiple-choice 'agentls-test)))))

(ert-deftest agentls-test-diff-choices ()
  "The diff's header line shows the server's labels; R rejects the session's later edits unasked."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("greek.txt" . "alpha\nbeta\ngamma\n"))))
           (path (expand-file-name "greek.txt" root))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
                           (:calls [(:name "replace" :args (:file_path ,path :old_string "beta" :new_string "BETA"))])
                           (:calls [(:name "replace" :args (:file_path ,path :old_string "gamma" :new_string "GAMMA"))])
                           (:text "Both refused.")])))
           (buf (agentls-test--start root "greek.txt" url))
           (diffs 0))
      (with-current-buffer buf (agentls "capitalize beta and gamma"))
      (with-current-buffer (agentls-test--diff-buffer)
        ;; Reject has several keys (r, q, C-c C-k): the header shows one of them.
        (dolist (want '("a Allow once" "A Allow every edit for this session"
                        "S Always allow replace, and save it in your settings"
                        " Reject · " "R Always reject replace for this session"))
          (should (string-search want header-line-format)))
        (advice-add 'agentls--show-edit :before (lambda (&rest _) (cl-incf diffs)) '((name . agentls-test)))
        (agentls-diff-reject-always))
      (unwind-protect
          (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
        (advice-remove 'agentls--show-edit 'agentls-test))
      (should (= diffs 0))
      (let ((lines (cl-remove-if-not (lambda (l) (string-prefix-p "- replace: " l))
                                     (split-string (agentls-test--chat-text) "\n"))))
        (should (= 2 (length lines)))
        (should (string-suffix-p " · cancelled" (nth 0 lines)))
        ;; Refused by the session's "always reject", unasked.
        (should (string-match-p " · \\(cancelled\\|failed\\)$" (nth 1 lines))))
      (should (equal (agentls-test--text buf) "alpha\nbeta\ngamma\n"))
      (should (equal (agentls-test--disk path) "alpha\nbeta\ngamma\n")))))

;;;; The sandbox

(defun agentls-test--menu-text ()
  "Show `agentls-menu' from the current buffer; return its text, then close it."
  (agentls-menu)
  (unwind-protect
      (let ((buf (agentls-test--wait (lambda () (get-buffer " *transient*")) "the agentls menu")))
        (with-current-buffer buf (buffer-string)))
    (transient-quit-all)))

(defun agentls-test--sandbox-text (what)
  "Wait for the buffer *agentls sandbox* to say WHAT; return its text."
  (agentls-test--wait (lambda () (let ((b (get-buffer "*agentls sandbox*")))
                                   (and b (string-search what (agentls-test--text b))
                                        (agentls-test--text b))))
                      (format "*agentls sandbox* to say %S" what)))

(ert-deftest agentls-test-sandbox ()
  "The menu says how shell commands are contained; `agentls-sandbox' shows the details.
This machine has Landlock and user namespaces: commands are contained
with both."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (buf (agentls-test--start root "a.txt" nil))
           (conn (agentls-test--conn)))
      (agentls-test--wait (lambda () (agentls--sandbox conn)) "the server's sandbox status")
      (with-current-buffer buf
        (let ((menu (agentls-test--menu-text)))
          (should (string-search " b Sandbox: contained (landlock+namespaces, network off)" menu)))
        (agentls-sandbox))
      (let ((text (agentls-test--sandbox-text "Shell commands: ")))
        (should (string-search (format "(asked of the server for %s)" (abbreviate-file-name root)) text))
        (should (string-search "Shell commands: contained (landlock+namespaces, network off)\n" text))
        (should (string-search "  Landlock:         ABI " text))
        (should (string-search "  user namespaces:  yes\n" text))
        (should (string-search "Network:   off\n" text))
        (should (string-search (format "Writable:\n  %s\n" (abbreviate-file-name (directory-file-name root))) text))
        (should (string-search (format "Read-only inside them:\n  %s.git/config\n" (abbreviate-file-name root)) text))
        (should (string-search "Hidden:\n  ~/.ssh\n" text))
        (should-not (string-search "What to do" text)))
      (with-current-buffer buf (agentls-doctor))
      (should (string-search "shell commands: contained (landlock+namespaces, network off)"
                             (agentls-test--text "*agentls doctor*"))))))

(ert-deftest agentls-test-sandbox-landlock-only ()
  "Landlock alone (no user namespaces): the details say what is weaker and why."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (buf (let ((process-environment (cons "AGENTLS_SANDBOX_MACHINE=landlock" process-environment)))
                  (agentls-test--start root "a.txt" nil)))
           (conn (agentls-test--conn)))
      (agentls-test--wait (lambda () (agentls--sandbox conn)) "the server's sandbox status")
      (with-current-buffer buf
        (should (string-search " b Sandbox: contained (landlock, network off)\n" (agentls-test--menu-text)))
        (agentls-sandbox))
      (let ((text (agentls-test--sandbox-text "Shell commands: ")))
        (should (string-search "Shell commands: contained (landlock, network off); Landlock only (turned off by AGENTLS_SANDBOX_MACHINE=landlock)" text))
        (should (string-search "Landlock alone: writes outside the writable paths are refused" text))
        (should (string-search "What to do:\n  - AGENTLS_SANDBOX_MACHINE is set" text))
        (should (string-search "  user namespaces:  no (turned off by AGENTLS_SANDBOX_MACHINE=landlock)" text))
        (should (string-search "Writable:\n" text))
        (should-not (string-search "Read-only inside them" text))
        (should-not (string-search "Hidden:" text))))))

(ert-deftest agentls-test-sandbox-not-contained ()
  "Not contained shows in the menu, and the details say why and what is missing.
Without a server `agentls-sandbox' asks the program; then with one."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (default-directory root))
      ;; No server yet: the program answers, with the server's environment.
      (setq agentls-server-program (append (list agentls-test-bin "serve") agentls-test--server-args)
            agentls-server-environment '("AGENTLS_SANDBOX_MACHINE=none"))
      (with-current-buffer (find-file-noselect (expand-file-name "a.txt" root))
        (should-not (agentls--connection t))
        (agentls-sandbox))
      (let ((text (agentls-test--sandbox-text "Shell commands: ")))
        (should (string-search "no server runs there" text))
        (should (string-search "Shell commands: not contained: Landlock: turned off by AGENTLS_SANDBOX_MACHINE=none; user namespaces: turned off by AGENTLS_SANDBOX_MACHINE=none\n" text))
        (should (string-search "Commands run with all your rights" text))
        (should (string-search "What to do:\n  - AGENTLS_SANDBOX_MACHINE is set" text))
        (should (string-search "  Landlock:         no (turned off by AGENTLS_SANDBOX_MACHINE=none)" text))
        (should-not (string-search "Writable:" text)))
      (kill-buffer "*agentls sandbox*")
      (should-not (cl-some #'agentls--live-p (hash-table-values agentls--connections)))
      ;; With a server.
      (let* ((buf (let ((process-environment (cons "AGENTLS_SANDBOX_MACHINE=none" process-environment)))
                    (agentls-test--start root "a.txt" nil)))
             (conn (agentls-test--conn)))
        (agentls-test--wait (lambda () (agentls--sandbox conn)) "the server's sandbox status")
        (with-current-buffer buf
          (let* ((menu (agentls-test--menu-text))
                 (at (string-search "Sandbox: NOT contained" menu)))
            (should at)
            (should (eq (get-text-property at 'face menu) 'agentls-error)))
          (agentls-sandbox))
        (let ((text (agentls-test--sandbox-text "asked of the server")))
          (should (string-search "Shell commands: not contained: Landlock: turned off" text)))))))

(provide 'agentls-test)

(ert-deftest agentls-test-custom-commands ()
  "A custom command (Gemini CLI's .toml) completes in `agentls' and agentls expands it."
  (agentls-test--with
    (let* ((requests (make-temp-file "agentls-requests-"))
           (url (agentls-test--fake-gemini '(:turns [(:text "Committed.")]) requests))
           (config (make-temp-file "agentls-config-" t))
           (root (agentls-test--workspace '(("a.txt" . "alpha\n")))))
      (make-directory (expand-file-name "agentls/commands/git" config) t)
      (with-temp-file (expand-file-name "agentls/commands/git/commit.toml" config)
        (insert "description = \"Writes a commit message\"\nprompt = \"Commit message for {{args}}.\"\n"))
      (let ((buf (agentls-test--start root "a.txt" url nil
                                      (list (concat "XDG_CONFIG_HOME=" config))))
            (conn (agentls-test--conn)))
        (should (equal (agentls-commands conn) '(("/git:commit" . "Writes a commit message"))))
        ;; The minibuffer's completion (its prompt ends at the buffer's start here).
        (with-temp-buffer
          (insert "/gi")
          (setq-local agentls--commands-conn conn)
          (let ((capf (agentls--command-capf)))
            (should (equal (all-completions "/gi" (nth 2 capf)) '("/git:commit")))
            (should (equal (funcall (plist-get (nthcdr 3 capf) :annotation-function) "/git:commit")
                           "  Writes a commit message"))))
        (with-current-buffer buf
          (agentls "/git:commit the parser"))
        (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
        (should (string-search "Committed." (agentls-test--chat-text)))
        (should (string-search "Commit message for the parser." (agentls-test--disk requests)))))))

;;; agentls-test.el ends here

;;;; Turns: diff, undo and redo of a shell command's changes

(defun agentls-test--messages-advice (log)
  "An advice for `message' that pushes each message onto the symbol LOG."
  (lambda (orig fmt &rest args)
    (when fmt (set log (cons (apply #'format-message fmt args) (symbol-value log))))
    (apply orig fmt args)))

(defvar agentls-test--messages nil "The messages of the running test, newest first.")

(defun agentls-test--wait-message (needle)
  "Wait for a message containing NEEDLE; return it."
  (agentls-test--wait (lambda () (cl-find-if (lambda (m) (string-search needle m)) agentls-test--messages))
                      (format "the message %S (messages: %S)" needle agentls-test--messages)))

(ert-deftest agentls-test-turn-undo-redo-shell ()
  "A prompt's shell command (sed -i on the open file, a file made, one removed, chmod)
is shown by `agentls-turn-diff' with the command beside each file, undone
by `agentls-undo-turn' (the buffer in one undo step, the rest on disk)
and brought back by `agentls-redo-turn'; a redo where the file changed
since the undo asks, and nothing is redone when the answer is no."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("notes.txt" . "hello\nworld\n") ("gone.txt" . "bye\n")
                                            ("run.sh" . "#!/bin/sh\n") (".gitignore" . "build/\n"))))
           (notes (expand-file-name "notes.txt" root))
           (made (expand-file-name "made.txt" root))
           (gone (expand-file-name "gone.txt" root))
           (script (expand-file-name "run.sh" root))
           (line "sed -i s/hello/HELLO/ notes.txt && echo new > made.txt && rm gone.txt && chmod +x run.sh && mkdir -p build && echo o > build/out.o")
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "run_shell_command" :args (:command ,line))])
                           (:text "Done.")])))
           (buf (progn (set-file-modes (expand-file-name "run.sh" root) #o644)
                       (agentls-test--start root "notes.txt" url '(:approvalMode "yolo")))))
      (setq agentls-test--messages nil)
      (advice-add 'message :around (agentls-test--messages-advice 'agentls-test--messages) '((name . agentls-test)))
      (unwind-protect
          (progn
            (with-current-buffer buf (agentls "change the files"))
            (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn" 60)
            (should (equal (agentls-test--disk notes) "HELLO\nworld\n"))
            (should (equal (agentls-test--disk made) "new\n"))
            (should-not (file-exists-p gone))
            (should (= (file-modes script) #o755))
            ;; The editor reloads the file the command rewrote.
            (with-current-buffer buf (revert-buffer t t))
            (should (equal (agentls-test--text buf) "HELLO\nworld\n"))

            ;; The diff: each file headed by the command that changed it.
            (with-current-buffer buf (agentls-turn-diff))
            (let* ((diff (agentls-test--wait (lambda () (get-buffer "*agentls turn 1*")) "the turn diff buffer"))
                   (text (agentls-test--text diff)))
              (with-current-buffer diff
                (should (derived-mode-p 'diff-mode))
                (should (string-search "# notes.txt: changed by run_shell_command: sed -i s/hello/HELLO/ notes.txt" text))
                (should (string-search "+HELLO" text))
                (should (string-search "# mode 0644 → 0755" text))
                (should (string-search "# left out: " text))
                (should (string-search "prompt 1" header-line-format))
                (goto-char (point-min))
                (search-forward "changed by run_shell_command")
                (should (memq 'agentls-turn-by (mapcar (lambda (o) (overlay-get o 'face)) (overlays-at (point)))))
                (goto-char (point-min))
                (search-forward "# left out")
                (should (memq 'agentls-turn-warning (mapcar (lambda (o) (overlay-get o 'face)) (overlays-at (point)))))
                ;; RET on a changed line visits the file there.
                (goto-char (point-min))
                (re-search-forward "^\\+HELLO")
                (diff-goto-source))
              (should (eq (window-buffer (selected-window)) buf))
              (should (= (with-current-buffer buf (line-number-at-pos)) 1)))

            ;; Undo: everything back; the buffer in one undo step.
            (with-current-buffer buf (agentls-undo-turn))
            (let ((msg (agentls-test--wait-message "undid prompt 1")))
              (should (string-search "ignored paths left out" msg)))
            (agentls-test--wait (lambda () (equal (agentls-test--text buf) "hello\nworld\n")) "the buffer after the undo")
            (should (equal (agentls-test--disk notes) "hello\nworld\n"))
            (should-not (file-exists-p made))
            (should (equal (agentls-test--disk gone) "bye\n"))
            (should (= (file-modes script) #o644))
            (should (equal (agentls-test--disk (expand-file-name "build/out.o" root)) "o\n"))
            (with-current-buffer buf
              (undo-boundary)
              (undo)
              (should (equal (agentls-test--text buf) "HELLO\nworld\n"))
              (undo-boundary)
              (undo)
              (should (equal (agentls-test--text buf) "hello\nworld\n")))

            ;; Redo: the command's result is back.
            (with-current-buffer buf (agentls-redo-turn))
            (agentls-test--wait-message "redid prompt 1")
            (agentls-test--wait (lambda () (equal (agentls-test--text buf) "HELLO\nworld\n")) "the buffer after the redo")
            (should (equal (agentls-test--disk notes) "HELLO\nworld\n"))
            (should (equal (agentls-test--disk made) "new\n"))
            (should-not (file-exists-p gone))
            (should (= (file-modes script) #o755))

            ;; Undone again, then the user changes the file: the redo asks.
            (setq agentls-test--messages nil)
            (with-current-buffer buf (agentls-undo-turn))
            (agentls-test--wait-message "undid prompt 1")
            (agentls-test--wait (lambda () (equal (agentls-test--text buf) "hello\nworld\n")) "undone again")
            (with-current-buffer buf
              (goto-char (point-min))
              (insert "mine "))
            (let (asked)
              (cl-letf (((symbol-function 'y-or-n-p) (lambda (prompt) (setq asked prompt) nil)))
                (with-current-buffer buf (agentls-redo-turn))
                (agentls-test--wait (lambda () asked) "the question"))
              (should (string-search "since the undo of prompt 1, so nothing was redone: notes.txt" asked))
              (agentls-test--wait-message "nothing was redone"))
            (should (equal (agentls-test--text buf) "mine hello\nworld\n"))
            (should-not (file-exists-p made)))
        (advice-remove 'message 'agentls-test)))))

(ert-deftest agentls-test-turn-not-recorded ()
  "An unwatched command (AGENTLS_SANDBOX_MACHINE=none) is said to be not recorded.
In the turn diff and in the message of the undo, which takes back the
prompt's edit and leaves the command's file."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "a\n"))))
           (path (expand-file-name "a.txt" root))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
                           (:calls [(:name "replace" :args (:file_path ,path :old_string "a" :new_string "A"))])
                           (:calls [(:name "run_shell_command" :args (:command "echo x > made.txt"))])
                           (:text "Done.")])))
           (buf (let ((process-environment (cons "AGENTLS_SANDBOX_MACHINE=none" process-environment)))
                  (agentls-test--start root "a.txt" url '(:approvalMode "yolo")))))
      (setq agentls-test--messages nil)
      (advice-add 'message :around (agentls-test--messages-advice 'agentls-test--messages) '((name . agentls-test)))
      (unwind-protect
          (progn
            (with-current-buffer buf (agentls "go"))
            (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn" 60)
            (should (equal (agentls-test--disk (expand-file-name "made.txt" root)) "x\n"))
            (with-current-buffer buf (agentls-turn-diff))
            (let ((diff (agentls-test--wait (lambda () (get-buffer "*agentls turn 1*")) "the turn diff buffer")))
              (with-current-buffer diff
                (should (string-search "# not recorded: `echo x > made.txt`" (agentls-test--text diff)))
                (should (string-search "1 command not recorded" header-line-format))))
            (with-current-buffer buf (agentls-undo-turn))
            (let ((msg (agentls-test--wait-message "undid prompt 1")))
              (should (string-search "not recorded, so not taken back: `echo x > made.txt`" msg)))
            (agentls-test--wait (lambda () (equal (agentls-test--text buf) "a\n")) "the edit undone")
            (should (equal (agentls-test--disk (expand-file-name "made.txt" root)) "x\n")))
        (advice-remove 'message 'agentls-test)))))

;;;; The editor's diagnostics, with gopls (issue 24)

(defvar agentls-test-gopls (getenv "AGENTLS_GOPLS") "The gopls binary (scripts/gopls.sh).")

(unless (fboundp 'go-mode)
  (define-derived-mode go-mode prog-mode "Go"
    "A stand-in for go-mode: eglot names the language \"go\" after it."))

(defconst agentls-test--main-go "package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n")

(defconst agentls-test--type-error "(untyped string constant) as int value in variable declaration"
  "What gopls says of line 4 once it holds var n int = \"x\".")

(defun agentls-test--generate-requests (file)
  "The bodies of the generate requests recorded in FILE, in order."
  (with-temp-buffer
    (insert-file-contents file)
    (cl-loop for line in (split-string (buffer-string) "\n" t)
             for r = (json-parse-string line :object-type 'plist)
             when (and (string-match-p "generateContent" (or (plist-get r :Path) ""))
                       (numberp (plist-get r :Turn)) (> (plist-get r :Turn) 0))
             collect (json-serialize (plist-get r :Body)))))

(defun agentls-test--gopls-workspace (main)
  "A Go module whose main.go holds MAIN, open in go-mode under eglot and gopls.
Return the buffer once gopls has loaded the package."
  (require 'eglot)
  (unless (and agentls-test-gopls (file-executable-p agentls-test-gopls))
    (ert-fail (format "AGENTLS_GOPLS is not an executable: %S" agentls-test-gopls)))
  (let* ((root (agentls-test--workspace `(("go.mod" . "module example.com/diag\n\ngo 1.26\n")
                                          ("main.go" . ,main))))
         (buf (find-file-noselect (expand-file-name "main.go" root)))
         (process-environment (append '("GOTOOLCHAIN=local" "GOFLAGS=") process-environment))
         (eglot-server-programs `((go-mode . (,agentls-test-gopls))))
         (eglot-autoreconnect nil))
    (with-current-buffer buf
      (go-mode)
      (apply #'eglot (eglot--guess-contact))
      (agentls-test--wait (lambda () (and (eglot-current-server) (eglot-managed-p)))
                          "eglot to manage main.go with gopls" 60)
      ;; A hover answers once gopls has loaded the package.
      (should (jsonrpc-request (eglot-current-server) :textDocument/hover
                               (list :textDocument (list :uri (agentls--path-to-uri buffer-file-name))
                                     :position (list :line 3 :character 5))
                               :timeout 60)))
    (push (jsonrpc--process (with-current-buffer buf (eglot-current-server))) agentls-test--processes)
    buf))

(ert-deftest agentls-test-diagnostics-gopls ()
  "gopls's message for the line an edit broke reaches the model; the fix is resolved.
eglot runs gopls beside agentls; agentls.el reports the Flymake
diagnostics of the edited buffer once they settle."
  (agentls-test--with
    (let* ((buf (agentls-test--gopls-workspace agentls-test--main-go))
           (root agentls-test--root)
           (path (expand-file-name "main.go" root))
           (requests (make-temp-file "agentls-requests-" nil ".jsonl"))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
                           (:calls [(:name "replace" :args (:file_path ,path :old_string "var n int = 1"
                                                            :new_string "var n int = \"x\""))])
                           (:calls [(:name "replace" :args (:file_path ,path :old_string "var n int = \"x\""
                                                            :new_string "var n int = 2"))])
                           (:text "Done.")])
                 requests)))
      (agentls-test--start root "main.go" url '(:approvalMode "yolo"))
      (with-current-buffer buf (agentls "break it, then fix it"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn" 60)
      (let ((reqs (agentls-test--generate-requests requests)))
        (should (= (length reqs) 4))
        (should-not (string-search agentls-test--type-error (nth 1 reqs)))
        (should (string-search "main.go:4: error: cannot use" (nth 2 reqs)))
        (should (string-search agentls-test--type-error (nth 2 reqs)))
        (should (string-search "reported before this change are resolved" (nth 3 reqs))))
      (should (equal (agentls-test--disk path) (replace-regexp-in-string "= 1" "= 2" agentls-test--main-go))))))

(ert-deftest agentls-test-diagnostics-off ()
  "With `agentls-report-diagnostics' off the model is told nothing, and nothing waits."
  (agentls-test--with
    (let* ((agentls-report-diagnostics nil)
           (buf (agentls-test--gopls-workspace agentls-test--main-go))
           (root agentls-test--root)
           (path (expand-file-name "main.go" root))
           (requests (make-temp-file "agentls-requests-" nil ".jsonl"))
           (url (agentls-test--fake-gemini
                 `(:turns [(:calls [(:name "read_file" :args (:file_path ,path))])
                           (:calls [(:name "replace" :args (:file_path ,path :old_string "var n int = 1"
                                                            :new_string "var n int = \"x\""))])
                           (:text "Done.")])
                 requests))
           start)
      (agentls-test--start root "main.go" url '(:approvalMode "yolo"))
      (setq start (float-time))
      (with-current-buffer buf (agentls "break it"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn" 60)
      (should (< (- (float-time) start) 1.5))
      (let ((reqs (agentls-test--generate-requests requests)))
        (should (= (length reqs) 3))
        (should-not (string-search agentls-test--type-error (nth 2 reqs)))
        (should-not (string-search "editor's diagnostics" (nth 2 reqs)))))))

(ert-deftest agentls-bench-diagnostics ()
  "Figures for BENCHMARKS.md (bench/diagnostics.sh; not part of the suite).
The model's edits alternately break and fix main.go under eglot and
gopls, AGENTLS_BENCH_EDITS of them (default 20) in one prompt; the
server logs each edit's settledMs into AGENTLS_BENCH_LOG."
  (agentls-test--with
    (let* ((edits (string-to-number (or (getenv "AGENTLS_BENCH_EDITS") "20")))
           (log (or (getenv "AGENTLS_BENCH_LOG") (ert-fail "AGENTLS_BENCH_LOG is not set")))
           (buf (agentls-test--gopls-workspace agentls-test--main-go))
           (root agentls-test--root)
           (path (expand-file-name "main.go" root))
           (good "var n int = 1") (bad "var n int = \"x\"")
           (turns (append
                   (list `(:calls [(:name "read_file" :args (:file_path ,path))]))
                   (cl-loop for i from 1 to edits
                            collect `(:calls [(:name "replace"
                                               :args (:file_path ,path
                                                      :old_string ,(if (cl-oddp i) good bad)
                                                      :new_string ,(if (cl-oddp i) bad good)))]))
                   (list '(:text "Done."))))
           (url (agentls-test--fake-gemini (list :turns (apply #'vector turns)))))
      (let ((agentls-test--server-args (list "--log-file" log)))
        (agentls-test--start root "main.go" url '(:approvalMode "yolo")))
      (with-current-buffer buf (agentls "break and fix it, again and again"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn" (+ 60 (* 3 edits))))))

(ert-deftest agentls-test-region-diagnostics ()
  "A prompt about a region carries the other backends' diagnostics of its lines."
  (agentls-test--with
    (let* ((root (agentls-test--workspace '(("a.txt" . "alpha\nbetaa\ngamma\n"))))
           (requests (make-temp-file "agentls-requests-" nil ".jsonl"))
           (url (agentls-test--fake-gemini '(:turns [(:text "That is a typo.")]) requests))
           (buf (agentls-test--start root "a.txt" url)))
      (with-current-buffer buf
        (setq-local flymake-diagnostic-functions (list #'agentls-test--fake-backend))
        (flymake-mode 1)
        (flymake-start)
        (agentls-test--wait (lambda () (flymake-diagnostics)) "the other backend's diagnostic")
        (transient-mark-mode 1)
        (goto-char (point-min))
        (set-mark (point))
        (forward-line 2)
        (should (use-region-p))
        (agentls "what is wrong here?"))
      (agentls-test--wait-chat "_turn ended: end_turn" "the end of the turn")
      (let ((req (car (agentls-test--generate-requests requests))))
        (should (string-search "The user asks about this diagnostic: line 2: error: undefined: betaa" req))))))
