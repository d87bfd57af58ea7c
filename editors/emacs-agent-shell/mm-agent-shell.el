;;; mm-agent-shell.el --- mm in agent-shell -*- lexical-binding: t; -*-

;; Paste into your init file after agent-shell is loaded, then run
;; M-x mm-agent-shell (or pick "mm" from M-x agent-shell).

(require 'agent-shell)

(defun mm-agent-shell-make-config ()
  "Return an agent-shell configuration that starts `mm acp'."
  (agent-shell-make-agent-config
   :identifier 'mm
   :mode-line-name "mm"
   :buffer-name "mm"
   :shell-prompt "mm> "
   :shell-prompt-regexp "mm> "
   :client-maker (lambda (buffer)
                   (agent-shell--make-acp-client
                    :command "mm"
                    :command-params '("acp")
                    :environment-variables
                    (agent-shell-make-environment-variables
                     "MM_BASE_URL" "http://127.0.0.1:8080/v1")
                    :context-buffer buffer))))

(defun mm-agent-shell ()
  "Start an mm agent shell."
  (interactive)
  (agent-shell--dwim :config (mm-agent-shell-make-config) :new-shell t))

(add-to-list 'agent-shell-agent-configs (mm-agent-shell-make-config))

;;; mm-agent-shell.el ends here
