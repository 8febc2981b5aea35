"""The editor snippets of docs/editors.md, run in the editors where this machine has them: Neovim (headless, a
manifest opened, the diagnostics vllmlint sent read back), Emacs with Eglot (batch mode, Flymake's
diagnostics), Helix (no binary: the snippet is read as TOML and its shape checked). Each snippet's syntax is
checked by the editor's own reader whenever that editor exists.

Other Neovim builds can be named in VLLMLINT_TEST_NVIM (paths separated by the path separator), e.g. a newer
one next to Debian 12's 0.7.2."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "editors.md"
BIN = Path(sys.executable).parent  # where this environment's `vllmlint` is (the snippets run `vllmlint server`)

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: ["Qwen/Qwen2.5-7B-Instruct", "--swap-space=16"]
"""
SCRIPT = "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --swap-space 16\n"


def snippets(section: str, language: str) -> list[str]:
    """The ```language blocks of one `## section` of docs/editors.md."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, section
    return re.findall(rf"^```{language}\n(.*?)^```", match.group(1), re.S | re.M)


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": os.environ.get("HOME", "/")}


def _workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / ".vllmlint.yaml").write_text("vllm-version: 0.29.0\n", encoding="utf-8")
    (folder / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    (folder / "run.sh").write_text(SCRIPT, encoding="utf-8")
    return folder


# --- Neovim ------------------------------------------------------------------------------------------
def _neovims() -> list[tuple[str, tuple[int, int]]]:
    found = []
    paths = [p for p in os.environ.get("VLLMLINT_TEST_NVIM", "").split(os.pathsep) if p]
    if shutil.which("nvim"):
        paths.append(shutil.which("nvim") or "")
    for path in dict.fromkeys(paths):
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
        except OSError:
            continue
        version = re.match(r"NVIM v(\d+)\.(\d+)", out)
        if version:
            found.append((path, (int(version.group(1)), int(version.group(2)))))
    return found


NEOVIMS = _neovims()
DRIVER = """\
vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 100)
local codes = {}
for _, d in ipairs(vim.diagnostic.get(0)) do table.insert(codes, tostring(d.code)) end
io.stdout:write("DIAGNOSTICS " .. table.concat(codes, " ") .. "\\n")
vim.cmd("qa!")
"""


def test_the_doc_has_both_neovim_snippets():
    lua = snippets("Neovim", "lua")
    assert len(lua) == 2
    assert "vim.lsp.config" in lua[0] and "vim.lsp.start" in lua[1]
    assert "vim.fs.root" not in lua[1]  # 0.10 only: the second snippet is for 0.8 and later
    assert "Neovim 0.8 or newer" in DOC.read_text(encoding="utf-8")


@pytest.mark.skipif(not NEOVIMS, reason="no Neovim on this machine")
@pytest.mark.parametrize("nvim, version", NEOVIMS, ids=[f"nvim-{v[0]}.{v[1]}" for _, v in NEOVIMS])
@pytest.mark.parametrize("which", [0, 1], ids=["0.11-config", "0.8-autocmd"])
def test_neovim_snippet_gets_diagnostics(tmp_path: Path, nvim: str, version: tuple[int, int], which: int):
    snippet = snippets("Neovim", "lua")[which]
    init = tmp_path / "init.lua"
    init.write_text(snippet, encoding="utf-8")
    driver = tmp_path / "driver.lua"
    driver.write_text(DRIVER, encoding="utf-8")
    folder = _workspace(tmp_path)
    # the syntax, by Neovim's own Lua (any version)
    check = subprocess.run([nvim, "--headless", "-u", "NONE", "-c",
                            f"lua assert(loadfile('{init}'))", "-c", "qa!"],
                           capture_output=True, text=True, timeout=60, env=_env())
    assert check.returncode == 0 and "Error" not in check.stderr, check.stderr
    minimum = (0, 11) if which == 0 else (0, 8)
    if version < minimum:
        if which == 0:
            pytest.skip(f"the first snippet needs Neovim 0.11 ({version} here)")
        # the 0.8 snippet on an older Neovim: one clear line, no Lua error
        proc = subprocess.run([nvim, "--headless", "-u", str(init), "-c", "qa!", "deploy.yaml"], cwd=folder,
                              capture_output=True, text=True, timeout=60, env=_env())
        output = proc.stdout + proc.stderr
        assert "needs Neovim 0.8 or newer" in output and "attempt to index" not in output, output
        return
    proc = subprocess.run([nvim, "--headless", "-u", str(init), "-c", f"luafile {driver}", "deploy.yaml"],
                          cwd=folder, capture_output=True, text=True, timeout=120, env=_env())
    line = next((x for x in proc.stdout.splitlines() if x.startswith("DIAGNOSTICS")), "")
    assert "VL102" in line.split(), proc.stdout[-2000:] + proc.stderr[-2000:]  # --swap-space: removed


# --- Emacs -------------------------------------------------------------------------------------------
EMACS = shutil.which("emacs")
ELISP_DRIVER = """\
(unless (locate-library "eglot")
  (require 'package)
  (add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
  (package-initialize))
(require 'eglot)
(find-file (car command-line-args-left))
(setq command-line-args-left nil)
(run-hooks 'post-command-hook)
(let ((deadline (+ (float-time) 60)))
  (while (and (null (flymake-diagnostics)) (< (float-time) deadline))
    (accept-process-output nil 0.2)
    (when (bound-and-true-p flymake-mode) (flymake-start))))
(princ (format "DIAGNOSTICS %s\\n" (mapconcat #'flymake-diagnostic-text (flymake-diagnostics) " | ")))
(kill-emacs 0)
"""


def test_the_doc_has_the_eglot_snippet():
    elisp = snippets("Emacs", "elisp")
    assert any("eglot-server-programs" in s for s in elisp)


@pytest.mark.skipif(EMACS is None, reason="no Emacs on this machine")
def test_emacs_snippets_read_as_lisp(tmp_path: Path):
    for number, snippet in enumerate(snippets("Emacs", "elisp")):
        path = tmp_path / f"s{number}.el"
        path.write_text(snippet, encoding="utf-8")
        reader = (f'(with-temp-buffer (insert-file-contents "{path}") (goto-char (point-min))'
                  '(condition-case nil (while t (read (current-buffer))) (end-of-file (princ "READ-OK"))))')
        proc = subprocess.run([EMACS or "emacs", "--batch", "-Q", "--eval", reader], capture_output=True, text=True,
                              timeout=60)
        assert "READ-OK" in proc.stdout, proc.stderr


@pytest.mark.skipif(EMACS is None, reason="no Emacs on this machine")
def test_eglot_snippet_gets_diagnostics(tmp_path: Path):
    snippet = next(s for s in snippets("Emacs", "elisp") if "eglot-server-programs" in s)
    init = tmp_path / "init.el"
    init.write_text(snippet, encoding="utf-8")
    driver = tmp_path / "driver.el"
    driver.write_text(ELISP_DRIVER, encoding="utf-8")
    folder = _workspace(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)  # Eglot's project: the repository
    proc = subprocess.run([EMACS or "emacs", "--batch", "-Q", "-l", str(init), "-l", str(driver), "run.sh"],
                          cwd=folder, capture_output=True, text=True, timeout=180, env=_env())
    if "Cannot open load file" in proc.stderr and "eglot" in proc.stderr:
        pytest.skip("Emacs without Eglot (Emacs 29 has it built in; Debian 12: elpa-eglot)")
    line = next((x for x in proc.stdout.splitlines() if x.startswith("DIAGNOSTICS")), "")
    assert "[VL102]" in line, proc.stdout[-2000:] + proc.stderr[-2000:]


# --- Helix -------------------------------------------------------------------------------------------
def test_helix_snippet_is_toml_adding_the_server_beside_each_language_own():
    tomllib = pytest.importorskip("tomllib")
    (snippet,) = snippets("Helix", "toml")
    config = tomllib.loads(snippet)
    assert config["language-server"]["vllmlint"] == {"command": "vllmlint", "args": ["server"]}
    languages = {entry["name"]: entry["language-servers"] for entry in config["language"]}
    # Helix's own names (its languages.toml): the language and its default server, which the list keeps
    own = {"yaml": ["yaml-language-server"], "docker-compose": ["docker-compose-langserver", "yaml-language-server"],
           "json": ["vscode-json-language-server"], "bash": ["bash-language-server"], "markdown": ["marksman"]}
    assert set(languages) == set(own)
    for name, servers in languages.items():
        assert servers == [*own[name], "vllmlint"], name
