"""vllmlint's language server (`vllmlint server`): diagnostics, fixes, suppressions, hover and completion in
the editor, with the cross-file world of the workspace folder. Needs the `server` extra
(pygls 2 and lsprotocol: `pip install '/path/to/vllmlint[server]'` from a checkout or a wheel built from one); nothing else of vllmlint imports this package.

- `positions`: offsets to LSP positions in the negotiated encoding (no pygls)
- `parse_cache`: parsed YAML kept between runs (no pygls)
- `project`: a workspace folder, its configuration, its files, its last run (no pygls)
- `features`: diagnostics, code actions, hover, completion from a run (lsprotocol types)
- `server`: the pygls wiring
- `command`: the `vllmlint server` subcommand
"""
